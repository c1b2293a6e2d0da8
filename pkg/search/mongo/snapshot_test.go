package mongo_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cityfinder/cityfinder/internal/mongotest"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/mongo"
)

// A file of more chunks than one reply holds comes back whole; one that
// lost a chunk fails the check. (FerretDB 1.24 answers a getMore without a
// batch size with every chunk left, in a reply too large for the driver:
// the download must ask for small batches.)
func TestSnapshotDownload(t *testing.T) {
	uri := mongotest.URI(t)
	db := mongotest.Database(t, uri)
	s := mustOpen(t, uri, mongo.Options{Database: db})
	defer s.Close()
	data := make([]byte, 5<<20+12345) // 21 chunks of 255 kB
	r := rand.NewChaCha8([32]byte{1})
	_, _ = r.Read(data)
	path := filepath.Join(t.TempDir(), "large.cfs")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := s.PublishSnapshot(t.Context(), search.Large, path, 7)
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	snaps, err := s.CurrentSnapshots(t.Context())
	if err != nil || snaps[search.Large] != snap || snap.Gen != 1 || snap.Cities != 7 || snap.Size != int64(len(data)) {
		t.Fatalf("current snapshots %+v, %v; want the one published, %+v", snaps, err, snap)
	}
	var got bytes.Buffer
	if err := s.DownloadSnapshot(t.Context(), snap, &got); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("download: %d bytes, %v; want the %d published", got.Len(), err, len(data))
	}

	chunks := mongotest.Client(t, uri).Database(db).Collection(snap.Bucket + ".chunks")
	if _, err := chunks.DeleteOne(t.Context(), bson.D{{Key: "files_id", Value: snap.FileID}, {Key: "n", Value: 20}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DownloadSnapshot(t.Context(), snap, &got); !errors.Is(err, mongo.ErrSnapshotMismatch) {
		t.Errorf("download without its last chunk: err = %v, want ErrSnapshotMismatch", err)
	}
	if _, err := chunks.DeleteOne(t.Context(), bson.D{{Key: "files_id", Value: snap.FileID}, {Key: "n", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DownloadSnapshot(t.Context(), snap, &got); !errors.Is(err, mongo.ErrSnapshotMismatch) {
		t.Errorf("download without a chunk in the middle: err = %v, want ErrSnapshotMismatch", err)
	}
}
