package importer

// GeoNamesColumns lets the tests name a GeoNames row's columns as the
// reader does.
var GeoNamesColumns = geonamesColumns
