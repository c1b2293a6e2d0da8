package search

import (
	"math"
	"strconv"
	"strings"
)

// Point is a place on Earth in decimal degrees.
type Point struct {
	Lat, Lon float64
}

func (p Point) valid() bool {
	return !math.IsNaN(p.Lat) && !math.IsNaN(p.Lon) && p.Lat >= -90 && p.Lat <= 90 && p.Lon >= -180 && p.Lon <= 180
}

// earthRadiusKm is the mean radius of the Earth.
const earthRadiusKm = 6371.0088

// DistanceKm is the great-circle distance between two points, in
// kilometres (the haversine formula).
func DistanceKm(a, b Point) float64 {
	const rad = math.Pi / 180
	dLat, dLon := (b.Lat-a.Lat)*rad, (b.Lon-a.Lon)*rad
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(a.Lat*rad)*math.Cos(b.Lat*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadiusKm * math.Asin(math.Min(1, math.Sqrt(h)))
}

// Location bias: how a point near which the person is pulls the ranking
// (see Request.Near). A city's biased score is
//
//	(Score + BiasFloor) × (1 + d/BiasDistanceKm)^(−4 × scale)
//
// where d is its distance to the point and scale is Request.BiasScale:
// 0 leaves the order as it is, 1 pulls hardest. At the default scale (0.5)
// a city 25 km away counts a quarter, 250 km a hundred-and-twentieth, so
// that New York City 300 km away still beats a hamlet next door, but a
// town next door beats a city ten times its size on another continent.
// BiasFloor gives places of unknown or tiny population a score, so that
// distance decides between them.
const (
	DefaultBiasScale = 0.5
	BiasDistanceKm   = 25
	// BiasFloor is in the units of Score: people.
	BiasFloor = 1000
	// nearbyKm is the half-side of the box around the point in which the
	// best matches are searched besides the best of the whole world:
	// beyond it, even the floor's pull is spent.
	nearbyKm = 250
)

// biasScore is the biased score of a match of Score score at distance d.
func biasScore(score, d, scale float64) float64 {
	return (score + BiasFloor) * math.Pow(1+d/BiasDistanceKm, -4*scale)
}

// nearBox returns the box of half-side km around p, clipped to the map.
func nearBox(p Point, km float64) *Box {
	dLat := km / 111.32
	dLon := 180.0
	if c := math.Cos(p.Lat * math.Pi / 180); c > 0.01 {
		dLon = math.Min(180, km/(111.32*c))
	}
	return &Box{
		MinLat: math.Max(-90, p.Lat-dLat), MaxLat: math.Min(90, p.Lat+dLat),
		MinLon: math.Max(-180, p.Lon-dLon), MaxLon: math.Min(180, p.Lon+dLon),
	}
}

// intersect returns the box common to a and b, nil when either is nil
// (then the other), and ok false when they do not meet.
func intersect(a, b *Box) (box *Box, ok bool) {
	switch {
	case a == nil:
		return b, true
	case b == nil:
		return a, true
	}
	c := &Box{
		MinLon: math.Max(a.MinLon, b.MinLon), MinLat: math.Max(a.MinLat, b.MinLat),
		MaxLon: math.Min(a.MaxLon, b.MaxLon), MaxLat: math.Min(a.MaxLat, b.MaxLat),
	}
	return c, c.MinLon <= c.MaxLon && c.MinLat <= c.MaxLat
}

// ParsePoint reads "LAT,LON" in decimal degrees. Its error is an
// *InvalidError about field "near".
func ParsePoint(s string) (*Point, error) {
	v, ok := parseNumbers(s, 2)
	p := &Point{Lat: v[0], Lon: v[1]}
	if !ok || !p.valid() {
		return nil, invalid("near", "Invalid location %q: use LAT,LON, latitude from -90 to 90 and longitude from -180 to 180", clip(s))
	}
	return p, nil
}

// ParseBox reads "minLon,minLat,maxLon,maxLat" in decimal degrees, the
// order of Photon's bbox. Its error is an *InvalidError about field "bbox".
func ParseBox(s string) (*Box, error) {
	v, ok := parseNumbers(s, 4)
	b := &Box{MinLon: v[0], MinLat: v[1], MaxLon: v[2], MaxLat: v[3]}
	if !ok || !b.valid() {
		return nil, invalid("bbox", "Invalid bbox %q: use minLon,minLat,maxLon,maxLat (longitudes -180 to 180, latitudes -90 to 90, min ≤ max)", clip(s))
	}
	return b, nil
}

// parseNumbers reads n finite numbers separated by commas.
func parseNumbers(s string, n int) ([4]float64, bool) {
	var v [4]float64
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return v, false
	}
	for i, p := range parts {
		f, ok := ParseDecimal(strings.TrimSpace(p))
		if !ok {
			return v, false
		}
		v[i] = f
	}
	return v, true
}

// ParseDecimal reads a plain decimal number, as people and files write
// coordinates: an optional sign, digits, and a point with more digits on
// either side of it or both ("48.85", "-.5", "2."). Anything else is no
// number, even what strconv.ParseFloat would read: hexadecimal ("0x1p4"),
// digits grouped with underscores ("1_0"), exponents, infinities and NaN.
func ParseDecimal(s string) (float64, bool) {
	t := s
	if t != "" && (t[0] == '-' || t[0] == '+') {
		t = t[1:]
	}
	digits, point := 0, false
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case '0' <= c && c <= '9':
			digits++
		case c == '.' && !point:
			point = true
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil // out of range: ±Inf and an error
}

// clip shortens a value quoted in a message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
