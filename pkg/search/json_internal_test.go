package search

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// appendJSONFloat writes what strconv's shortest formatting writes, the
// way encoding/json does, whichever path it takes: the decimals of
// coordinates (up to seven, appendFixed) and every other number.
func TestAppendJSONFloatIsShortest(t *testing.T) {
	check := func(f float64) {
		t.Helper()
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) < 1e-6 && f != 0 || math.Abs(f) >= 1e21 {
			return // null, and exponents: encoding/json's own path
		}
		if got, want := string(appendJSONFloat(nil, f)), strconv.FormatFloat(f, 'f', -1, 64); got != want {
			t.Fatalf("appendJSONFloat(%v) = %s, want %s", f, got, want)
		}
	}
	for _, f := range []float64{0, 1, -1, 0.5, -33.456944, 18.4719444, -70.648333, 180, -180, 90, 0.1, 0.0000001,
		1e-6, 99999999.9999999, -99999999.9999999, 1e8, 12.3456789, 1234.5, 47.000001, -0.0000005, 0.1 + 0.2,
		math.Nextafter(18.4719444, 0), math.Nextafter(18.4719444, 100), math.Pi, 1.0 / 3} {
		check(f)
	}
	r := rand.New(rand.NewPCG(26, 2))
	for range 200_000 {
		digits := r.IntN(10)
		n := r.Int64N(2_000_000_000) - 1_000_000_000
		f := float64(n) / math.Pow(10, float64(digits))
		check(f)
		check(math.Nextafter(f, math.Inf(1)))
		check(r.Float64()*360 - 180)
		check(math.Float64frombits(r.Uint64()))
	}
}

func FuzzAppendJSONFloat(f *testing.F) {
	f.Add(-33.456944)
	f.Add(18.4719444)
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) < 1e-6 && v != 0 || math.Abs(v) >= 1e21 {
			return
		}
		if got, want := string(appendJSONFloat(nil, v)), strconv.FormatFloat(v, 'f', -1, 64); got != want {
			t.Fatalf("appendJSONFloat(%v) = %s, want %s", v, got, want)
		}
	})
}
