package report

// The clean methods of the document types: each cleans its own strings
// and map keys (see cleanStrings).

func (x *Report) clean() {
	cleanString(&x.Schema, false)
	cleanString(&x.Version, false)
	cleanString(&x.RunID, false)
	cleanString(&x.Vantage, false)
	cleanAll(x.Command)
	x.Plan.clean()
	for i := range x.DNS {
		x.DNS[i].clean()
	}
	x.Totals.clean()
	cleanKeyed(x.Families, func(v **Stats) {
		if *v != nil {
			(*v).clean()
		}
	})
	for i := range x.Endpoints {
		x.Endpoints[i].clean()
	}
	for i := range x.Fingerprints {
		x.Fingerprints[i].clean()
	}
	x.Timeline.clean()
	x.Client.clean()
	x.Verdict.clean()
	for i := range x.Thresholds {
		x.Thresholds[i].clean()
	}
	for i := range x.Groups {
		x.Groups[i].clean()
	}
	cleanString(&x.ClientError, false)
	for i := range x.Preflight {
		x.Preflight[i].clean()
	}
	cleanString(&x.NotProbed, false)
	for i := range x.Inputs {
		x.Inputs[i].clean()
	}
	for i := range x.Vantages {
		x.Vantages[i].clean()
	}
	cleanAll(x.Notes)
}

func (x *Plan) clean() {
	cleanString(&x.HTTP, false)
	cleanString(&x.FailStatus, false)
	cleanString(&x.Only, false)
	cleanAll(x.GroupBy)
}

func (x *DNS) clean() {
	cleanString(&x.Host, false)
	cleanString(&x.Source, false)
	cleanAll(x.Addresses)
	cleanString(&x.Error, false)
	for i := range x.Changes {
		x.Changes[i].clean()
	}
	cleanString(&x.Input, false)
	if x.Missed != nil {
		x.Missed.clean()
	}
}

func (x *Stats) clean() {
	cleanCounts(x.Status)
	cleanCounts(x.Errors)
	cleanString(&x.HDR, false)
}

func (x *Endpoint) clean() {
	x.Stats.clean()
	cleanString(&x.Target, false)
	cleanString(&x.Host, false)
	cleanString(&x.Address, false)
	cleanString(&x.Family, false)
	for i := range x.DNSHistory {
		x.DNSHistory[i].clean()
	}
	x.Phases.clean()
	cleanKeyed[map[string]ConnStats](x.Connections, nil)
	cleanCounts(x.AfterFailure)
	for i := range x.Samples {
		x.Samples[i].clean()
	}
	if x.Trail != nil {
		x.Trail.clean()
	}
}

func (x *Fingerprint) clean() {
	cleanString(&x.Error, false)
	cleanString(&x.Server, false)
	cleanString(&x.BodyHash, false)
	cleanString(&x.Producer, false)
	cleanCounts(x.Addresses)
	cleanString(&x.Body, true)
}

func (x *Timeline) clean() {
	for i := range x.Series {
		x.Series[i].clean()
	}
	for i := range x.Families {
		x.Families[i].clean()
	}
	for i := range x.Groups {
		x.Groups[i].clean()
	}
}

func (x *Client) clean() {
	cleanAll(x.LocalAddresses)
	cleanString(&x.PortSet, false)
}

func (x *Verdict) clean() {
	cleanString(&x.Status, false)
	cleanString(&x.Headline, false)
	cleanString(&x.Summary, false)
	for i := range x.Suspects {
		x.Suspects[i].clean()
	}
	for i := range x.Tests {
		x.Tests[i].clean()
	}
	cleanAll(x.Notes)
	for i := range x.Slow {
		x.Slow[i].clean()
	}
	for i := range x.Vantages {
		x.Vantages[i].clean()
	}
}

func (x *Threshold) clean() {
	cleanString(&x.Name, false)
	cleanString(&x.Scope, false)
	cleanString(&x.Unit, false)
	cleanString(&x.Status, false)
}

func (x *Group) clean() {
	cleanString(&x.Header, false)
	cleanString(&x.Value, false)
	x.Stats.clean()
	cleanCounts(x.Addresses)
	cleanCounts(x.FailedBy)
}

func (x *PreflightCheck) clean() {
	cleanString(&x.Target, false)
	cleanString(&x.Address, false)
	cleanString(&x.Family, false)
	cleanString(&x.ALPN, false)
	cleanString(&x.Local, false)
	cleanString(&x.Error, false)
	cleanString(&x.Class, false)
}

func (x *Input) clean() {
	cleanString(&x.File, false)
	cleanString(&x.Version, false)
	cleanString(&x.RunID, false)
	cleanString(&x.Vantage, false)
	cleanAll(x.Command)
}

func (x *VantageStats) clean() {
	cleanString(&x.Name, false)
	cleanKeyed[map[string]ConnStats](x.Families, nil)
	for i := range x.Endpoints {
		x.Endpoints[i].clean()
	}
}

func (x *DNSChange) clean() {
	cleanAll(x.Added)
	cleanAll(x.Removed)
}

func (x *DNSMissed) clean() {
	cleanString(&x.Error, false)
}

func (x *DNSEvent) clean() {
	cleanString(&x.Event, false)
}

func (x *Phases) clean() {
	x.Connect.clean()
	x.TLS.clean()
	x.TTFB.clean()
}

func (x *Sample) clean() {
	cleanString(&x.RequestID, false)
	cleanString(&x.Error, false)
	cleanString(&x.Class, false)
	cleanString(&x.Local, false)
	cleanString(&x.Remote, false)
	cleanString(&x.Proto, false)
	cleanKeyed(x.Headers, func(s *string) { cleanString(s, false) })
	cleanString(&x.Body, true)
}

func (x *Trail) clean() {
	for i := range x.Requests {
		x.Requests[i].clean()
	}
}

func (x *Series) clean() {
	cleanString(&x.Address, false)
	cleanString(&x.Target, false)
}

func (x *FamilySeries) clean() {
	cleanString(&x.Family, false)
}

func (x *GroupSeries) clean() {
	cleanString(&x.Header, false)
	cleanString(&x.Value, false)
}

func (x *Suspect) clean() {
	cleanString(&x.Kind, false)
	cleanString(&x.How, false)
	cleanString(&x.Group, false)
	cleanString(&x.Header, false)
	cleanString(&x.Value, false)
	cleanString(&x.Agrees, false)
	cleanAll(x.Addresses)
	cleanString(&x.Address, false)
	cleanString(&x.Family, false)
	cleanString(&x.Target, false)
}

func (x *Test) clean() {
	cleanString(&x.Kind, false)
	cleanString(&x.Scope, false)
	cleanString(&x.Family, false)
	cleanString(&x.Address, false)
	cleanString(&x.Target, false)
	cleanString(&x.Header, false)
	cleanString(&x.Value, false)
	cleanString(&x.Vantage, false)
}

func (x *SlowFinding) clean() {
	cleanString(&x.Kind, false)
	cleanString(&x.Scope, false)
	cleanString(&x.Address, false)
	cleanString(&x.Target, false)
	cleanString(&x.Header, false)
	cleanString(&x.Value, false)
	x.SlowResult.clean()
}

func (x *VantageEndpoint) clean() {
	cleanString(&x.Target, false)
	cleanString(&x.Address, false)
	cleanString(&x.Family, false)
}

func (x *Phase) clean() {
	cleanString(&x.HDR, false)
}

func (x *TrailRequest) clean() {
	cleanString(&x.RequestID, false)
	cleanString(&x.Class, false)
}

func (x *SlowResult) clean() {
	cleanString(&x.Method, false)
	cleanString(&x.Reason, false)
}
