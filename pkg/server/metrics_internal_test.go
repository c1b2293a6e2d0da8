package server

import "testing"

func TestRouteLabel(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{"GET /search", "/search"},
		{"/search", "/search"},
		{"OPTIONS /search", "/search"},
		{"GET /static/{name}", "/static/{name}"},
		{"GET /{$}", "/"},
		{"/{$}", "/"},
		{"/", "other"},
		{"", "other"},
	}
	for _, tt := range tests {
		if got := routeLabel(tt.pattern); got != tt.want {
			t.Errorf("routeLabel(%q) = %q, want %q", tt.pattern, got, tt.want)
		}
	}
}
