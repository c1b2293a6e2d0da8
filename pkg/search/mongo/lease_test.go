package mongo_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	driver "go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/cityfinder/cityfinder/internal/mongotest"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/mongo"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// gatedReader yields its cities in one batch, then blocks until open is
// closed; started is closed when the batch has been read.
type gatedReader struct {
	cities  []search.City
	started chan struct{}
	open    chan struct{}
	read    bool
}

func newGatedReader(cities ...search.City) *gatedReader {
	return &gatedReader{cities: cities, started: make(chan struct{}), open: make(chan struct{})}
}

func (r *gatedReader) ReadBatch(dst []search.City) ([]search.City, error) {
	if !r.read {
		r.read = true
		close(r.started)
		return append(dst, r.cities...), nil
	}
	<-r.open
	return dst, io.EOF
}

// Two imports of one dataset at once, as from two processes: the second is
// refused at once with a message naming the first, and touches nothing;
// the first, whose lease outlives several TTLs by renewing it, never has
// its staging collection dropped and swaps its cities in.
// (FerretDB answers the upsert that meets a live lease with a duplicate key
// error, code 11000, as MongoDB does; it also lacks dropTarget, so the first
// load's swap takes the two-rename path here and the one-rename path on
// MongoDB.)
func TestConcurrentLoadsOfOneDataset(t *testing.T) {
	uri := mongotest.URI(t)
	db := mongotest.Database(t, uri)
	const ttl = 600 * time.Millisecond
	first := mustOpen(t, uri, mongo.Options{Database: db, BatchSize: 1, LeaseTTL: ttl})
	defer first.Close()
	second := mustOpen(t, uri, mongo.Options{Database: db, LeaseTTL: ttl})
	defer second.Close()
	storetest.MustLoad(t, first, search.Small, storetest.City("Paris", "France", "", 0))

	r := newGatedReader(storetest.City("Parla", "Spain", "", 0), storetest.City("Parma", "Italy", "", 0))
	loaded := make(chan error, 1)
	go func() {
		_, err := first.Load(t.Context(), search.Small, r, search.LoadOptions{})
		loaded <- err
	}()
	<-r.started
	client := mongotest.Client(t, uri)
	leases := client.Database(db).Collection(mongo.LeaseCollection)
	// Renewed twice: the lease lives on past its TTL while the load runs.
	var expiries []time.Time
	for deadline := time.Now().Add(20 * time.Second); len(expiries) < 3; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the lease's expiry took %d values in 20s, want 3: not renewed", len(expiries))
		}
		var l struct{ Expires time.Time }
		if err := leases.FindOne(t.Context(), bson.D{{Key: "_id", Value: "load:small"}}).Decode(&l); err != nil {
			continue
		}
		if len(expiries) == 0 || !l.Expires.Equal(expiries[len(expiries)-1]) {
			expiries = append(expiries, l.Expires)
		}
	}
	staging := stagingCollections(t, client, db)
	if len(staging) != 1 {
		t.Fatalf("staging collections while the first load runs: %q, want one", staging)
	}

	_, err := second.Load(t.Context(), search.Small, &search.SliceReader{Cities: []search.City{storetest.City("Lyon", "France", "", 0)}}, search.LoadOptions{})
	if !errors.Is(err, mongo.ErrLoadRunning) {
		t.Fatalf("the second load: err = %v, want ErrLoadRunning", err)
	}
	for _, want := range []string{"another import of this dataset is running: process " + fmt.Sprint(os.Getpid()), "try again when it has finished"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the second load's error %q does not say %q", err, want)
		}
	}
	if got := stagingCollections(t, client, db); !slices.Equal(got, staging) {
		t.Errorf("after the refused load, staging collections %q, want the first load's %q still there", got, staging)
	}

	close(r.open)
	if err := <-loaded; err != nil {
		t.Fatalf("the first load: %v", err)
	}
	if got := names(storetest.MustSearch(t, second, search.Small, "par", 10)); !slices.Equal(got, []string{"Parla", "Parma"}) {
		t.Errorf("after the first load: %q, want its Parla and Parma", got)
	}
	if n, err := leases.CountDocuments(t.Context(), bson.D{}); err != nil || n != 0 {
		t.Errorf("leases left after the load: %d, %v; want none", n, err)
	}
	storetest.MustLoad(t, second, search.Small, storetest.City("Lyon", "France", "", 0)) // free again
}

// A lease left by an import that died holds the dataset until it expires;
// then the next load takes it over and drops the dead load's staging
// collection. On Linux, one whose holder ran on this host, in this PID
// namespace, and is gone is taken over at once.
func TestLeaseOfADeadImport(t *testing.T) {
	uri := mongotest.URI(t)
	db := mongotest.Database(t, uri)
	s := mustOpen(t, uri, mongo.Options{Database: db})
	defer s.Close()
	client := mongotest.Client(t, uri)
	leases := client.Database(db).Collection(mongo.LeaseCollection)
	plant := func(host string, pid int, space string, expires time.Time) {
		t.Helper()
		if _, err := leases.DeleteMany(t.Context(), bson.D{}); err != nil {
			t.Fatal(err)
		}
		_, err := leases.InsertOne(t.Context(), bson.D{{Key: "_id", Value: "load:small"}, {Key: "owner", Value: bson.NewObjectID()},
			{Key: "host", Value: host}, {Key: "pid", Value: pid}, {Key: "pid_space", Value: space},
			{Key: "since", Value: time.Now().Add(-time.Hour)}, {Key: "expires", Value: expires}})
		if err != nil {
			t.Fatal(err)
		}
	}
	leftover := mongo.CollectionName(search.Small) + "__staging_000000000000000000000000"
	if _, err := client.Database(db).Collection(leftover).InsertOne(t.Context(), bson.D{{Key: "slug", Value: "parla"}}); err != nil {
		t.Fatal(err)
	}
	cities := &search.SliceReader{Cities: []search.City{storetest.City("Paris", "France", "", 0)}}

	plant("elsewhere", 4242, "", time.Now().Add(time.Hour))
	_, err := s.Load(t.Context(), search.Small, cities, search.LoadOptions{})
	if !errors.Is(err, mongo.ErrLoadRunning) || !strings.Contains(err.Error(), "process 4242 on elsewhere") {
		t.Fatalf("load under a live lease: err = %v, want ErrLoadRunning naming its holder", err)
	}
	if got := stagingCollections(t, client, db); !slices.Equal(got, []string{leftover}) {
		t.Errorf("the refused load touched the staging collections: %q", got)
	}

	plant("elsewhere", 4242, "", time.Now().Add(-time.Second))
	storetest.MustLoad(t, s, search.Small, storetest.City("Paris", "France", "", 0))
	if got := stagingCollections(t, client, db); len(got) != 0 {
		t.Errorf("staging collections after the takeover: %q, want none", got)
	}
	if n, err := leases.CountDocuments(t.Context(), bson.D{}); err != nil || n != 0 {
		t.Errorf("leases left after the load: %d, %v; want none", n, err)
	}

	space, err := os.Readlink("/proc/self/ns/pid")
	if runtime.GOOS != "linux" || err != nil {
		t.Skip("telling a dead holder on this host needs Linux's PID namespaces")
	}
	host, _ := os.Hostname()
	plant(host, os.Getpid(), space, time.Now().Add(time.Hour)) // alive: this test
	if _, err := s.Load(t.Context(), search.Small, cities, search.LoadOptions{}); !errors.Is(err, mongo.ErrLoadRunning) {
		t.Errorf("load under a live lease of this host: err = %v, want ErrLoadRunning", err)
	}
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	plant(host, dead.Process.Pid, space, time.Now().Add(time.Hour))
	storetest.MustLoad(t, s, search.Small, storetest.City("Paris", "France", "", 0))
	plant(host, dead.Process.Pid, "pid:[1]", time.Now().Add(time.Hour)) // another PID namespace: its PIDs are not ours
	if _, err := s.Load(t.Context(), search.Small, cities, search.LoadOptions{}); !errors.Is(err, mongo.ErrLoadRunning) {
		t.Errorf("load under a lease of another PID namespace: err = %v, want ErrLoadRunning", err)
	}
}

// stagingCollections lists the staging collections of db, sorted.
func stagingCollections(t *testing.T, client *driver.Client, db string) []string {
	t.Helper()
	all, err := client.Database(db).ListCollectionNames(t.Context(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var staging []string
	for _, name := range all {
		if strings.Contains(name, "__staging_") {
			staging = append(staging, name)
		}
	}
	slices.Sort(staging)
	return staging
}
