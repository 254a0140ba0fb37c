package report

// The clean methods of the document types: each cleans its own strings
// and map keys (see cleanStrings).

// cleanText cleans each of ss, keeping no newline (see cleanString).
func cleanText(ss ...*string) {
	for _, s := range ss {
		cleanString(s, false)
	}
}

// cleanEach cleans each element of s.
func cleanEach[T any, P interface {
	*T
	clean()
}](s []T) {
	for i := range s {
		P(&s[i]).clean()
	}
}

func (x *Report) clean() {
	cleanText(&x.Schema, &x.Version, &x.RunID, &x.Vantage, &x.ClientError, &x.NotProbed)
	cleanAll(x.Command)
	x.Plan.clean()
	cleanEach(x.DNS)
	x.Totals.clean()
	cleanKeyed(x.Families, func(v **Stats) {
		if *v != nil {
			(*v).clean()
		}
	})
	cleanEach(x.Endpoints)
	cleanEach(x.Fingerprints)
	x.Timeline.clean()
	x.Client.clean()
	x.Verdict.clean()
	cleanEach(x.Thresholds)
	cleanEach(x.Groups)
	cleanEach(x.Preflight)
	cleanEach(x.Inputs)
	cleanEach(x.Vantages)
	cleanAll(x.Notes)
}

func (x *Plan) clean() {
	cleanText(&x.HTTP, &x.FailStatus, &x.Only)
	cleanAll(x.GroupBy)
}

func (x *DNS) clean() {
	cleanText(&x.Host, &x.Source, &x.Error, &x.Input)
	cleanAll(x.Addresses)
	cleanEach(x.Changes)
	if x.Missed != nil {
		cleanText(&x.Missed.Error)
	}
}

func (x *Stats) clean() {
	cleanCounts(x.Status)
	cleanCounts(x.Errors)
	cleanText(&x.HDR)
}

func (x *Endpoint) clean() {
	x.Stats.clean()
	cleanText(&x.Target, &x.Host, &x.Address, &x.Family)
	cleanEach(x.DNSHistory)
	cleanText(&x.Phases.Connect.HDR, &x.Phases.TLS.HDR, &x.Phases.TTFB.HDR)
	cleanKeyed[map[string]ConnStats](x.Connections, nil)
	cleanCounts(x.AfterFailure)
	cleanEach(x.Samples)
	if x.Trail != nil {
		cleanEach(x.Trail.Requests)
	}
}

func (x *Fingerprint) clean() {
	cleanText(&x.Error, &x.Server, &x.BodyHash, &x.Producer)
	cleanCounts(x.Addresses)
	cleanString(&x.Body, true)
}

func (x *Timeline) clean() {
	cleanEach(x.Series)
	cleanEach(x.Families)
	cleanEach(x.Groups)
}

func (x *Client) clean() {
	cleanAll(x.LocalAddresses)
	cleanText(&x.PortSet)
}

func (x *Verdict) clean() {
	cleanText(&x.Status, &x.Headline, &x.Summary)
	cleanEach(x.Suspects)
	cleanEach(x.Tests)
	cleanAll(x.Notes)
	cleanEach(x.Slow)
	cleanEach(x.Vantages)
}

func (x *Threshold) clean() { cleanText(&x.Name, &x.Scope, &x.Unit, &x.Status) }

func (x *Group) clean() {
	cleanText(&x.Header, &x.Value)
	x.Stats.clean()
	cleanCounts(x.Addresses)
	cleanCounts(x.FailedBy)
}

func (x *PreflightCheck) clean() {
	cleanText(&x.Target, &x.Address, &x.Family, &x.ALPN, &x.Local, &x.Error, &x.Class)
}

func (x *Input) clean() {
	cleanText(&x.File, &x.Version, &x.RunID, &x.Vantage)
	cleanAll(x.Command)
}

func (x *VantageStats) clean() {
	cleanText(&x.Name)
	cleanKeyed[map[string]ConnStats](x.Families, nil)
	cleanEach(x.Endpoints)
}

func (x *DNSChange) clean() {
	cleanAll(x.Added)
	cleanAll(x.Removed)
}

func (x *DNSEvent) clean() { cleanText(&x.Event) }

func (x *Sample) clean() {
	cleanText(&x.RequestID, &x.Error, &x.Class, &x.Local, &x.Remote, &x.Proto)
	cleanKeyed(x.Headers, func(s *string) { cleanString(s, false) })
	cleanString(&x.Body, true)
}

func (x *Series) clean()       { cleanText(&x.Address, &x.Target) }
func (x *FamilySeries) clean() { cleanText(&x.Family) }
func (x *GroupSeries) clean()  { cleanText(&x.Header, &x.Value) }

func (x *Suspect) clean() {
	cleanText(&x.Kind, &x.How, &x.Group, &x.Header, &x.Value, &x.Agrees, &x.Address, &x.Family, &x.Target)
	cleanAll(x.Addresses)
}

func (x *Test) clean() {
	cleanText(&x.Kind, &x.Scope, &x.Family, &x.Address, &x.Target, &x.Header, &x.Value, &x.Vantage)
}

func (x *SlowFinding) clean() {
	cleanText(&x.Kind, &x.Scope, &x.Address, &x.Target, &x.Header, &x.Value, &x.Method, &x.Reason)
}

func (x *VantageEndpoint) clean() { cleanText(&x.Target, &x.Address, &x.Family) }
func (x *TrailRequest) clean()    { cleanText(&x.RequestID, &x.Class) }
