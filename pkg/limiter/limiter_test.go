package limiter_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
)

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name    string
		p       limiter.Policy
		wantErr bool
	}{
		{"the default", limiter.Policy{Max: 5, Window: 3 * time.Second}, false},
		{"the smallest", limiter.Policy{Max: 1, Window: time.Nanosecond}, false},
		{"zero max", limiter.Policy{Max: 0, Window: time.Second}, true},
		{"negative max", limiter.Policy{Max: -5, Window: time.Second}, true},
		{"zero window", limiter.Policy{Max: 5, Window: 0}, true},
		{"negative window", limiter.Policy{Max: 5, Window: -time.Second}, true},
		{"zero value", limiter.Policy{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.wantErr != (err != nil) {
				t.Fatalf("%+v.Validate() = %v, want error: %v", tt.p, err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, limiter.ErrInvalidPolicy) {
				t.Fatalf("%+v.Validate() = %v, want it to wrap ErrInvalidPolicy", tt.p, err)
			}
		})
	}
}
