package server

import "testing"

func TestDatasetLabel(t *testing.T) {
	tests := []struct{ rawQuery, want string }{
		{"", "small"},
		{"q=ist", "small"},
		{"q=ist&dataset=large", "large"},
		{"dataset=small&q=ist", "small"},
		{"dataset=", "small"},
		{"dataset=huge", otherDataset},
		{"dataset=large&dataset=small", "large"},    // the first one, as url.Values.Get
		{"dataset=l%61rge", "large"},                // escaped
		{"d%61taset=large", "large"},                // escaped key
		{"dataset=%zz&dataset=large", "large"},      // a bad escape: ParseQuery skips the pair
		{"dataset=large;x=1&dataset=huge", "other"}, // a semicolon: ParseQuery skips the pair
		{"xdataset=large", "small"},
		{"dataset=LARGE", otherDataset},
		{"&&dataset=large", "large"},
	}
	for _, tt := range tests {
		if got := datasetLabel(tt.rawQuery); got != tt.want {
			t.Errorf("datasetLabel(%q) = %q, want %q", tt.rawQuery, got, tt.want)
		}
	}
}

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

func TestDatasetLabelDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { datasetLabel("q=ist&limit=5&dataset=large") }); n != 0 {
		t.Errorf("datasetLabel allocates %v times, want 0", n)
	}
}
