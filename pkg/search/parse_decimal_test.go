package search_test

import (
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

func TestParseDecimal(t *testing.T) {
	for _, tc := range []struct {
		text string
		want float64
		ok   bool
	}{
		{"48.85", 48.85, true}, {"-.5", -0.5, true}, {"+2.", 2, true}, {"0", 0, true}, {"-180", -180, true},
		{"0x1p4", 0, false}, {"1_0", 0, false}, {"1e2", 0, false}, {"Inf", 0, false}, {"NaN", 0, false},
		{"", 0, false}, {"-", 0, false}, {".", 0, false}, {"1.2.3", 0, false}, {" 1", 0, false}, {"1 ", 0, false},
		{"--1", 0, false}, {"1" + strings.Repeat("0", 400), 0, false},
	} {
		got, ok := search.ParseDecimal(tc.text)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("ParseDecimal(%q) = %v, %v; want %v, %v", tc.text, got, ok, tc.want, tc.ok)
		}
	}
}
