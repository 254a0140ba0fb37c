package collect

import (
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// Plan is the report's plan of a run: what the engine was asked to do, as
// Start normalised it (probe.Run.Options), what counts as a failure, and
// the one family probed ("" for both).
func Plan(o probe.Options, fail report.FailStatus, only probe.Family) report.Plan {
	p := report.Plan{
		Max: o.Max, DurationS: o.Duration.Seconds(), Requests: o.Requests, Concurrency: o.Concurrency,
		Timeout: o.Timeout.Seconds(), HTTP: string(o.HTTP), NewConn: o.NewConn, FailStatus: fail.String(),
		Only: string(only), ConnRequests: o.ConnRequests, BusyWorkers: probe.BusyWorkers,
	}
	if !o.Max {
		p.Rate = o.Rate
		p.PaceGrainS = o.PaceGrain.Seconds()
	}
	if p.HTTP == "" {
		p.HTTP = string(probe.HTTPAuto)
	}
	if p.NewConn {
		p.ConnRequests = 1
	}
	return p
}

// Preflight is the document of each endpoint's check before the load.
func Preflight(eps []*probe.Endpoint, checks []probe.Check) []report.PreflightCheck {
	out := []report.PreflightCheck{}
	for i, c := range checks {
		ep := eps[i]
		pc := report.PreflightCheck{
			Target: ep.Target.String(), Address: ep.Addr.String(), Port: ep.Target.Port(), Family: string(ep.Family()),
			OK: c.Err == nil, ConnectMS: report.Millis(c.Connect), TLSMS: report.Millis(c.Handshake), ALPN: c.ALPN,
		}
		if c.Local.IsValid() {
			pc.Local = c.Local.String()
		}
		if c.Err != nil {
			pc.Error, pc.Class = c.Err.Error(), string(c.Class)
		}
		out = append(out, pc)
	}
	return out
}
