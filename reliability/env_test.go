package reliability

import (
	"strings"
	"testing"
	"time"
)

func lookupFrom(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestPolicyFromEnvDefaultsAndOverrides(t *testing.T) {
	p, err := PolicyFromEnv(lookupFrom(nil))
	if err != nil || p != DefaultPolicy() {
		t.Fatalf("empty environment: %+v, %v; want DefaultPolicy", p, err)
	}
	want := DefaultPolicy()
	if want.ToolTimeout != 15*time.Second || want.MaxAttempts != 3 || want.BackoffBase != 400*time.Millisecond ||
		want.RetryAfterCap != 5*time.Second || want.AttemptTimeout != 4*time.Second || want.BulkheadMax != 16 {
		t.Fatalf("DefaultPolicy %+v differs from the documented policy", want)
	}
	p, err = PolicyFromEnv(lookupFrom(map[string]string{
		EnvToolTimeout: "20", envAttemptTimeout: "2.5", envMaxAttempts: "4", envBackoffBase: "0.1",
		envRetryAfterCap: "0", envCacheTTL: "0", envCacheMaxBytes: "1048576", envBulkheadMax: " 8 ",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want.ToolTimeout, want.AttemptTimeout, want.MaxAttempts, want.BackoffBase = 20*time.Second, 2500*time.Millisecond, 4, 100*time.Millisecond
	want.RetryAfterCap, want.CacheTTL, want.CacheMaxBytes, want.BulkheadMax = 0, 0, 1<<20, 8
	if p != want {
		t.Errorf("PolicyFromEnv = %+v, want %+v", p, want)
	}
}

func TestPolicyFromEnvRejectsBadValues(t *testing.T) {
	cases := []struct {
		env                     map[string]string
		variable, value, range_ string
	}{
		{map[string]string{EnvToolTimeout: "fast"}, EnvToolTimeout, `"fast"`, "from 1 to 3600"},
		{map[string]string{EnvToolTimeout: "0"}, EnvToolTimeout, `"0"`, "from 1 to 3600"},
		{map[string]string{envMaxAttempts: "0"}, envMaxAttempts, `"0"`, "integer from 1 to 10"},
		{map[string]string{envMaxAttempts: "2.5"}, envMaxAttempts, `"2.5"`, "integer from 1 to 10"},
		{map[string]string{envBackoffBase: "-1"}, envBackoffBase, `"-1"`, "from 0 to 10"},
		{map[string]string{envBackoffBase: "NaN"}, envBackoffBase, `"NaN"`, "from 0 to 10"},
		{map[string]string{envRetryAfterCap: "61"}, envRetryAfterCap, `"61"`, "from 0 to 60"},
		{map[string]string{envCacheTTL: ""}, envCacheTTL, `""`, "from 0 to 86400"},
		{map[string]string{envCacheMaxBytes: "-5"}, envCacheMaxBytes, `"-5"`, "integer from 0"},
		{map[string]string{envBulkheadMax: "0"}, envBulkheadMax, `"0"`, "integer from 1 to 1024"},
		{map[string]string{envAttemptTimeout: "30"}, envAttemptTimeout, "30s", "no longer than the tool timeout"},
	}
	for _, c := range cases {
		_, err := PolicyFromEnv(lookupFrom(c.env))
		if err == nil {
			t.Errorf("%v accepted", c.env)
			continue
		}
		for _, part := range []string{c.variable, c.value, "accepted", c.range_} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("%v: error %q does not mention %q", c.env, err, part)
			}
		}
	}
}

func TestNewFillsPartialPoliciesAndRejectsInvalidOnes(t *testing.T) {
	// The attempt timeout follows the tool timeout (4/15 of it, adr/0011).
	l := New(Policy{ToolTimeout: 2 * time.Second}, Options{})
	if p := l.Policy(); p.MaxAttempts != 3 || p.AttemptTimeout != 533*time.Millisecond || p.BulkheadMax != 16 || p.CacheTTL != 0 {
		t.Errorf("partial policy became %+v", p)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(error).Error(), envMaxAttempts) {
			t.Errorf("New with 50 attempts: panic %v, want one naming %s", r, envMaxAttempts)
		}
	}()
	New(Policy{MaxAttempts: 50}, Options{})
}

// STAC_MCP_TOOL_TIMEOUT_SECS alone must start across the whole range the
// help advertises: the attempt timeout nobody set follows it (issue 10; on
// the old code 1, 2 and 3 failed with "attempt timeout 4s is longer").
func TestToolTimeoutAloneIsValidAcrossItsRange(t *testing.T) {
	for secs := 1; secs <= 3600; secs++ {
		p, err := PolicyFromEnv(lookupFrom(map[string]string{EnvToolTimeout: itoa(secs)}))
		if err != nil {
			t.Fatalf("%s=%d alone: %v", EnvToolTimeout, secs, err)
		}
		tool := time.Duration(secs) * time.Second
		if want := (tool * 4 / 15).Round(time.Millisecond); p.ToolTimeout != tool || p.AttemptTimeout != want {
			t.Fatalf("%s=%d: tool %v attempt %v, want %v and %v", EnvToolTimeout, secs, p.ToolTimeout, p.AttemptTimeout, tool, want)
		}
		if p.MinUsefulAttempt > p.AttemptTimeout {
			t.Fatalf("%s=%d: MinUsefulAttempt %v above the attempt timeout %v", EnvToolTimeout, secs, p.MinUsefulAttempt, p.AttemptTimeout)
		}
	}
	for _, frac := range []string{"1.5", "2.25", "59.9"} {
		if _, err := PolicyFromEnv(lookupFrom(map[string]string{EnvToolTimeout: frac})); err != nil {
			t.Errorf("%s=%s alone: %v", EnvToolTimeout, frac, err)
		}
	}
	// The documented default is unchanged: 4 s of 15 s.
	if p, _ := PolicyFromEnv(lookupFrom(map[string]string{EnvToolTimeout: "15"})); p != DefaultPolicy() {
		t.Errorf("%s=15 gave %+v, want DefaultPolicy", EnvToolTimeout, p)
	}
	// An explicit attempt timeout is kept when it fits...
	p, err := PolicyFromEnv(lookupFrom(map[string]string{EnvToolTimeout: "60", envAttemptTimeout: "4"}))
	if err != nil || p.AttemptTimeout != 4*time.Second {
		t.Errorf("explicit pair 60/4: %+v, %v; want the 4 s kept", p, err)
	}
	// ...and only an explicit pair that conflicts is an error, naming both.
	_, err = PolicyFromEnv(lookupFrom(map[string]string{EnvToolTimeout: "2", envAttemptTimeout: "4"}))
	if err == nil || !strings.Contains(err.Error(), EnvToolTimeout+" (2s)") || !strings.Contains(err.Error(), envAttemptTimeout+" (4s)") {
		t.Errorf("explicit pair 2/4: %v, want an error naming both settings", err)
	}
	_, err = PolicyFromEnv(lookupFrom(map[string]string{envAttemptTimeout: "30"}))
	if err == nil || !strings.Contains(err.Error(), "the default "+EnvToolTimeout) {
		t.Errorf("attempt 30 alone: %v, want an error saying the tool timeout is the default", err)
	}
}
