package report

// MaxConnRecords is how many connections of one endpoint are kept one by
// one; the connections after them are counted together in Conns.Overflow,
// so an endpoint's memory stays flat however long the run. 256 connections
// of 4 requests are about 1000 requests: enough for BurstTest's stretches
// and for a reader to see which connections failed, small enough to print.
const MaxConnRecords = 256

// ConnRecord is one TCP connection of an endpoint, as its requests saw it.
type ConnRecord struct {
	ID        uint64 `json:"id"`
	LocalPort uint16 `json:"local_port"`
	First     Time   `json:"first"` // start of its earliest request
	Last      Time   `json:"last"`  // start of its latest request
	Requests  int64  `json:"requests"`
	Failed    int64  `json:"failed"`
	// Fresh says the request that opened the connection is among
	// Requests; false when only reused requests were seen, which means
	// the connection's first request was not recorded here.
	Fresh bool `json:"fresh"`
}

// ConnOverflow counts the connections past the first MaxConnRecords.
type ConnOverflow struct {
	Connections int64 `json:"connections"`
	Requests    int64 `json:"requests"`
	Failed      int64 `json:"failed"`
}

// Conns is what an endpoint's requests did on each connection.
type Conns struct {
	Connections int64        `json:"connections"` // every connection seen: Records plus Overflow
	Requests    int64        `json:"requests"`    // every request, with Unconnected
	Failed      int64        `json:"failed"`
	Records     []ConnRecord `json:"records"` // the first MaxConnRecords connections, in the order first seen
	Overflow    ConnOverflow `json:"overflow"`
	// Unconnected counts the requests that never got a connection (the
	// dial or the TLS handshake failed): connection ID 0.
	Unconnected ConnStats `json:"unconnected"`
	// Repeat splits the reused requests of every connection, recorded or
	// not, by whether their connection had failed before, in consecutive
	// strata of the run: RepeatTest's input.
	Repeat []RepeatCounts `json:"repeat"`
}
