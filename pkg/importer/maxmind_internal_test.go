package importer

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// parseDecimal reads what it takes exactly as strconv.ParseFloat does.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"42.4666667", ".316667", "-.093689", "-88.9525000", "0", "-0", "-.0", "5.", ".", "-", "",
		"123456789012345", "1234567890123456", "0.000000000000001", "1e3", "+5", "1.2.3", "0x1p-2", "NaN", "-180", "179.9999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseDecimal([]byte(s))
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseDecimal(%q) = %v, ParseFloat: %v, %v", s, got, want, err)
		}
	})
}

func TestSplitFields(t *testing.T) {
	for _, tt := range []struct {
		line string
		n    int
		want []string
	}{
		{"a,b,c", 3, []string{"a", "b", "c"}},
		{"", 1, []string{"", "", ""}},
		{"a,,", 3, []string{"a", "", ""}},
		{"a,b,c,d,e", 5, []string{"a", "b", "c"}},
		{"a", 1, []string{"a", "", ""}},
	} {
		for name, split := range map[string]func([][]byte, []byte, byte) int{"splitFields": splitFields, "splitShortFields": splitShortFields} {
			var f [3][]byte
			if n := split(f[:], []byte(tt.line), ','); n != tt.n || string(f[0]) != tt.want[0] || string(f[1]) != tt.want[1] || string(f[2]) != tt.want[2] {
				t.Errorf("%s(%q) = %d %q, want %d %q", name, tt.line, n, f, tt.n, tt.want)
			}
		}
	}
}

func TestStringChunks(t *testing.T) {
	var s stringChunks
	var got, want []string
	for i := range 3 * stringChunk / 100 { // several chunks, some strings at their ends
		b := []byte(strconv.Itoa(i) + strings.Repeat("x", i%97))
		got, want = append(got, s.text(b)), append(want, string(b))
		clear(b) // the caller's scratch, written again
	}
	big := strings.Repeat("y", 2*stringChunk) // longer than a chunk
	got, want = append(got, s.text([]byte(big)), s.text(nil)), append(want, big, "")
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("string %d = %.40q, want %.40q", i, got[i], want[i])
		}
	}
}
