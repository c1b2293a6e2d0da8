package limiter_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
)

func TestPolicyMessage(t *testing.T) {
	tests := []struct {
		p    limiter.Policy
		want string
	}{
		{limiter.Policy{Max: 5, Window: 3 * time.Second}, "You can only do 5 searches in 3 seconds"},
		{limiter.Policy{Max: 2, Window: 1500 * time.Millisecond}, "You can only do 2 searches in 1.5 seconds"},
		{limiter.Policy{Max: 1, Window: time.Second}, "You can only do 1 search in 1 second"},
		{limiter.Policy{Max: 10, Window: 500 * time.Millisecond}, "You can only do 10 searches in 0.5 seconds"},
		{limiter.Policy{Max: 1, Window: 2 * time.Minute}, "You can only do 1 search in 120 seconds"},
		{limiter.Policy{Max: 3, Window: 1250 * time.Millisecond}, "You can only do 3 searches in 1.25 seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.p.Message(); got != tt.want {
				t.Fatalf("%+v.Message() = %q, want %q", tt.p, got, tt.want)
			}
		})
	}
}

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
