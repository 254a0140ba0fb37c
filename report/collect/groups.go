package collect

// SetGroupBy names the headers of probe.Result.Groups, in order.
func (a *Aggregator) SetGroupBy(headers []string) {
	a.groupBy = append([]string(nil), headers...)
	a.groups.Headers = append([]string(nil), headers...)
}
