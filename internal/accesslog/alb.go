package accesslog

import (
	"strconv"
	"strings"
	"time"
)

// An AWS ALB writes one line per request, space-separated, strings quoted, in
// this order (AWS's "Access log entries"; new fields are appended, and ignored):
//
//	type time elb client:port target:port request_processing_time
//	target_processing_time response_processing_time elb_status_code
//	target_status_code received_bytes sent_bytes "request" "user_agent"
//	ssl_cipher ssl_protocol target_group_arn "trace_id" "domain_name"
//	"chosen_cert_arn" matched_rule_priority request_creation_time
//	"actions_executed" "redirect_url" "error_reason" …
const (
	albType = iota
	albTime
	albELB
	albClient
	albTarget
	albRequestTime
	albTargetTime
	albResponseTime
	albStatus
	albTargetStatus
	albReceived
	albSent
	albRequest
	albMinFields // the fewest fields a line has: through "request"

	albTraceID             = 17
	albRequestCreationTime = 21
	albErrorReason         = 24
)

// albTypes are the values of an ALB line's first field.
var albTypes = map[string]bool{"http": true, "https": true, "h2": true, "grpcs": true, "ws": true, "wss": true}

// albFields splits an ALB line into its fields: runs of non-spaces, or
// strings in double quotes (\" inside them kept as "). At most 40.
func albFields(line string) []string {
	var out []string
	for i := 0; i < len(line) && len(out) < 40; {
		switch line[i] {
		case ' ':
			i++
		case '"':
			end := closingQuote(line[i:])
			if end < 0 {
				return append(out, line[i+1:])
			}
			out = append(out, unquote(line[i+1:i+end], false))
			i += end + 1
		default:
			j := strings.IndexByte(line[i:], ' ')
			if j < 0 {
				j = len(line) - i
			}
			out = append(out, line[i:i+j])
			i += j
		}
	}
	return out
}

// parseALB reads one ALB access-log line.
func parseALB(line string, r *Record) bool {
	f := albFields(line)
	if len(f) < albMinFields || !albTypes[f[albType]] {
		return false
	}
	end, ok := parseTime(f[albTime], layoutNano)
	if !ok {
		return false
	}
	client, ok := parseAddrPort(f[albClient])
	if !ok {
		return false
	}
	r.Client, r.ClientPort = client.Addr(), client.Port()
	r.Time, r.Resolution, r.AtEnd, r.Duration = end, time.Microsecond, true, -1
	// The time is when the response was sent; the three processing times
	// (-1 when the request got that far) lead back to its start.
	var total time.Duration
	known := true
	for _, k := range []int{albRequestTime, albTargetTime, albResponseTime} {
		d, ok := seconds(f[k])
		if !ok {
			known = false
			break
		}
		total += d
	}
	if known {
		r.Duration = total
	}
	if len(f) > albRequestCreationTime {
		if t, ok := parseTime(f[albRequestCreationTime], layoutNano); ok {
			r.Time, r.AtEnd = t, false
			if r.Duration < 0 {
				r.Duration = end.Sub(t)
			}
		}
	} else if known {
		r.Time, r.AtEnd = end.Add(-total), false
	}
	if r.Status, ok = parseStatus(f[albStatus]); !ok && dash(f[albStatus]) != "" {
		return false
	}
	if t := dash(f[albTarget]); t != "" {
		try := Try{Backend: t}
		try.Addr, _ = parseAddrPort(t)
		try.Status = statusText(f[albTargetStatus])
		r.Tries = []Try{try}
	}
	r.Method, r.URI = requestLine(f[albRequest])
	// The request's URL holds the listener's port: "GET
	// https://host:443/path HTTP/1.1".
	r.Listener = f[albELB]
	if _, rest, ok := strings.Cut(r.URI, "://"); ok {
		hostport, path, _ := strings.Cut(rest, "/")
		if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
			if p, ok := parsePort(hostport[i+1:]); ok {
				r.ServerPort = p
				r.Listener += ":" + strconv.Itoa(int(p))
				hostport = hostport[:i]
			}
		}
		r.Host, r.URI = hostport, "/"+path
	}
	if len(f) > albErrorReason {
		r.Reason = dash(f[albErrorReason])
	}
	return true
}
