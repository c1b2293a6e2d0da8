package search

import "testing"

func TestSameLine(t *testing.T) {
	springfield := City{Name: "Springfield", Slug: "springfield", Country: "United States", CountryCode: "us", Subcountry: "Illinois", Region: "il"}
	tests := []struct {
		name string
		edit func(c *City)
		want bool
	}{
		{"the same city", func(*City) {}, true},
		{"the same name in another subcountry", func(c *City) { c.Subcountry, c.Region = "Missouri", "mo" }, false},
		{"the same name in another country", func(c *City) { c.Country, c.CountryCode = "Canada", "ca" }, false},
		{"the same name, a slug of another length", func(c *City) { c.Slug = "springfield-il" }, true},
		{"the same slug, a name of another length", func(c *City) { c.Name = "Springfield (IL)" }, true},
		{"the same slug and another name in another region code", func(c *City) { c.Name, c.Region = "Springfield (IL)", "17" }, false},
		{"a name and a slug of other lengths", func(c *City) { c.Name, c.Slug = "Springfields", "springfields" }, false},
		{"a name and a slug of the same lengths", func(c *City) { c.Name, c.Slug = "Springfielt", "springfielt" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := springfield
			tt.edit(&other)
			if got := sameLine(&springfield, &other); got != tt.want {
				t.Errorf("sameLine(%+v, %+v) = %v, want %v", springfield, other, got, tt.want)
			}
			if got := sameLine(&other, &springfield); got != tt.want {
				t.Errorf("sameLine(%+v, %+v) = %v, want %v", other, springfield, got, tt.want)
			}
		})
	}
}

func TestLetters(t *testing.T) {
	for _, tt := range []struct {
		slug string
		want int
	}{
		{"", 0},
		{"paris", 5},
		{"san-jose", 7},
		{"-moskva", 6},
		{"a--b-", 2},
	} {
		if got := letters(tt.slug); got != tt.want {
			t.Errorf("letters(%q) = %d, want %d", tt.slug, got, tt.want)
		}
	}
}
