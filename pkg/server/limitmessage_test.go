package server_test

import (
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/server"
)

type limitArgs struct {
	max    int
	window time.Duration
}

func TestLimitMessage(t *testing.T) {
	tests := []struct {
		p    limitArgs
		want string
	}{
		{limitArgs{5, 3 * time.Second}, "You can only do 5 searches in 3 seconds"},
		{limitArgs{2, 1500 * time.Millisecond}, "You can only do 2 searches in 1.5 seconds"},
		{limitArgs{1, time.Second}, "You can only do 1 search in 1 second"},
		{limitArgs{10, 500 * time.Millisecond}, "You can only do 10 searches in 0.5 seconds"},
		{limitArgs{1, 2 * time.Minute}, "You can only do 1 search in 120 seconds"},
		{limitArgs{3, 1250 * time.Millisecond}, "You can only do 3 searches in 1.25 seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := server.LimitMessage(tt.p.max, tt.p.window); got != tt.want {
				t.Fatalf("server.LimitMessage(%+v) = %q, want %q", tt.p, got, tt.want)
			}
		})
	}
}
