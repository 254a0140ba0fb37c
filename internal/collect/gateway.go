package collect

import "strings"

// producers recognise who wrote an error page, by the Server header or the
// page text. Order matters: the first match wins.
var producers = []struct {
	name   string
	server []string // substrings of the lower-cased Server header
	body   []string // substrings of the lower-cased body
}{
	{"Azure Application Gateway", []string{"microsoft-azure-application-gateway"}, []string{"microsoft-azure-application-gateway"}},
	{"Azure Front Door", nil, []string{"our services aren't available right now", "azure front door"}},
	{"AWS ELB/ALB", []string{"awselb"}, []string{"awselb"}},
	{"Cloudflare", []string{"cloudflare"}, []string{"cloudflare ray id", "cf-error-details"}},
	{"Envoy", []string{"envoy"}, []string{"upstream connect error or disconnect/reset before headers", "no healthy upstream"}},
	{"HAProxy", []string{"haproxy"}, []string{"the server returned an invalid or incomplete response", "no server is available to handle this request"}},
	{"Google Cloud Load Balancer", []string{"google frontend", "gfe"}, []string{"the server encountered a temporary error"}},
	{"nginx", []string{"nginx"}, []string{"<center>nginx"}},
	{"Apache httpd", []string{"apache"}, []string{"proxy error", "<address>apache"}},
}

// Producer names the well-known gateway or proxy that produced a response,
// from its Server header and the first bytes of its body; "" when unknown.
func Producer(server string, body []byte) string {
	s := strings.ToLower(server)
	b := strings.ToLower(string(body))
	for _, p := range producers {
		for _, m := range p.server {
			if s != "" && strings.Contains(s, m) {
				return p.name
			}
		}
	}
	for _, p := range producers {
		for _, m := range p.body {
			if strings.Contains(b, m) {
				return p.name
			}
		}
	}
	return ""
}
