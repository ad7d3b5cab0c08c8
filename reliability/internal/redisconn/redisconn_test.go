package redisconn

import (
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	if o, bad := ParseURL("redis://user:hunter2@h:6379/3"); bad != nil || o.Password != "hunter2" || o.DB != 3 {
		t.Fatalf("a valid URL: %v, %+v", bad, o)
	}
	for raw, want := range map[string]string{
		"http://user:hunter2@h/":              "http://REDACTED@h/ is not a Redis URL (redis: invalid URL scheme: http)",
		"redis://user:hunter2@h:notaport/0":   "(an unparsable URL, not shown) is not a Redis URL (it does not parse as a URL",
		"redis://:hunter2@h:6379/0?db=x&k=v2": "redis://REDACTED@h:6379/0?db=x&k=v2 is not a Redis URL (",
	} {
		_, bad := ParseURL(raw)
		if bad == nil {
			t.Errorf("%s: accepted", raw)
			continue
		}
		if msg := bad.Error(); strings.Contains(msg, "hunter2") || !strings.HasPrefix(msg, want) {
			t.Errorf("%s: %q, want it to start with %q and hide the password", raw, msg, want)
		}
	}
}
