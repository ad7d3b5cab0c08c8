package faultinject

import (
	"slices"
	"strings"
	"testing"
)

func TestKindNamesRoundTripAndAreUnique(t *testing.T) {
	seen := map[string]Kind{}
	for _, k := range append([]Kind{None}, AllKinds()...) {
		name := k.String()
		if name == "" || strings.HasPrefix(name, "kind(") {
			t.Errorf("kind %d has no name", k)
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("kinds %d and %d share the name %q", prev, k, name)
		}
		seen[name] = k
		parsed, err := parseKind(name)
		if err != nil || parsed != k {
			t.Errorf("parseKind(%q) = %v, %v; want %v", name, parsed, err, k)
		}
		if k != None && k.Class() == ClassNone {
			t.Errorf("kind %v has no class", k)
		}
	}
	if len(AllKinds()) != int(kindCount)-1 {
		t.Errorf("AllKinds has %d kinds; want %d", len(AllKinds()), kindCount-1)
	}
}

func TestParseKindRejectsUnknownNames(t *testing.T) {
	_, err := parseKind("http_999")
	if err == nil || !strings.Contains(err.Error(), `"http_999"`) || !strings.Contains(err.Error(), "http_503") {
		t.Errorf("parseKind(http_999) error = %v; want it to name the input and list accepted kinds", err)
	}
}

func TestClassesMatchThePolicy(t *testing.T) {
	want := map[Class][]Kind{
		ClassRetryable: {HTTP500, HTTP502, HTTP503, HTTP504,
			HTTP429RetryAfterSeconds, HTTP429RetryAfterDate, HTTP429RetryAfterInvalid, HTTP429RetryAfterAboveCap,
			ConnectionRefused, ResetBeforeResponse, ResetMidBody, EOFAfterHeaders, TruncatedBody},
		ClassNonRetryable: {HTTP501, HTTP505, HTTP403Throttle, HTTP400, HTTP404, HTTP422,
			MalformedJSON, WrongContentType, NotSTACJSON, OversizedBody},
		ClassHang:    {HeadersDelayedBeyond, Hang},
		ClassSlow:    {HeadersDelayedWithin, SlowBody},
		ClassApplied: {AppliedThenReset, AppliedThenHang, AppliedThen503},
	}
	total := 0
	for class, kinds := range want {
		got := KindsOf(class)
		if !slices.Equal(got, kinds) {
			t.Errorf("KindsOf(%v) = %v; want %v", class, got, kinds)
		}
		total += len(got)
	}
	if total != len(AllKinds()) {
		t.Errorf("the classes cover %d kinds; want all %d", total, len(AllKinds()))
	}
	if got := KindsOf(ClassHang, ClassSlow); len(got) != 4 {
		t.Errorf("KindsOf(hang, slow) = %v; want the union of both", got)
	}
}
