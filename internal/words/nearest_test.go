package words

import "testing"

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"help", "help", 0}, {"hlep", "help", 1}, {"hepl", "help", 1},
		{"hel", "help", 1}, {"helpp", "help", 1}, {"kelp", "help", 1}, {"ca", "abc", 3},
		{"upstream_addr", "upstream_adr", 1}, {"compare", "comapre", 1}, {"", "abc", 3},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
	long := string(make([]byte, 65))
	if got := editDistance(long, "a"); got != 99 {
		t.Errorf("a 65-byte word: %d, want 99", got)
	}
}

func TestNearest(t *testing.T) {
	names := []string{"compare", "logs", "watch", "version", "help", "upstream_addr"}
	for word, want := range map[string]string{
		"comapre": "compare", "hlep": "help", "lgos": "logs", "versoin": "version",
		"upstream_adr": "upstream_addr", "log": "logs",
		"xyz": "", "": "", "lo": "", "compar": "compare", "wtch": "watch", "hel": "help",
	} {
		if got := Nearest(word, names); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", word, got, want)
		}
	}
}
