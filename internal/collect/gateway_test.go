package collect

import "testing"

func TestProducer(t *testing.T) {
	tests := []struct {
		server, body, want string
	}{
		{"Microsoft-Azure-Application-Gateway/v2", "", "Azure Application Gateway"},
		{"", "<hr><center>Microsoft-Azure-Application-Gateway/v2</center>", "Azure Application Gateway"},
		{"awselb/2.0", "", "AWS ELB/ALB"},
		{"", "<html><body><center><h1>502 Bad Gateway</h1></center><hr><center>awselb/2.0</center>", "AWS ELB/ALB"},
		{"nginx/1.22.1", "", "nginx"},
		{"", "<hr><center>nginx/1.22.1</center>", "nginx"},
		{"envoy", "", "Envoy"},
		{"", "upstream connect error or disconnect/reset before headers. reset reason: connection failure", "Envoy"},
		{"", "<html><body><h1>502 Bad Gateway</h1>\nThe server returned an invalid or incomplete response.\n</body></html>", "HAProxy"},
		{"cloudflare", "", "Cloudflare"},
		{"", "Cloudflare Ray ID: 8a1b2c3d4e5f6789", "Cloudflare"},
		{"Kestrel", "upstream timed out", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := Producer(tt.server, []byte(tt.body)); got != tt.want {
			t.Errorf("Producer(%q, %q) = %q; want %q", tt.server, tt.body, got, tt.want)
		}
	}
}
