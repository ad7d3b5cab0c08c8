package stacclient

import (
	"reflect"
	"strings"
	"testing"
)

// goodInput is one input a loose parser accepts and the value it must
// make of it.
type goodInput[T any] struct {
	name string
	in   any
	want T
}

// expectParsed runs parse over every case in a subtest and checks that it
// gives exactly want: reflect.DeepEqual, so an absent value must come back
// nil, not empty.
func expectParsed[T any](t *testing.T, parse func(any) (T, error), cases []goodInput[T]) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(tt.in)
			if err != nil {
				t.Fatalf("parsing %#v: %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parsing %#v gave %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// badInput is one input a loose parser must reject, and a fragment of the
// reason its error must give.
type badInput struct {
	name   string
	in     any
	reason string
}

// expectParamErrors runs parse over every case in a subtest and checks that
// each fails with a ParamError for param whose message contains the case's
// reason and quotes every one of acceptedForms.
func expectParamErrors[T any](t *testing.T, param string, parse func(any) (T, error), cases []badInput, acceptedForms ...string) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(tt.in)
			if err == nil {
				t.Fatalf("%s %#v parsed as %+v, want an error", param, tt.in, got)
			}
			assertParamError(t, err, param, tt.reason)
			for _, form := range acceptedForms {
				if !strings.Contains(err.Error(), form) {
					t.Errorf("error does not quote the accepted form %s: %v", form, err)
				}
			}
		})
	}
}
