package phrase

// Plural returns "s" unless n is 1: fmt.Sprintf("%d endpoint%s", n, Plural(n)).
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
