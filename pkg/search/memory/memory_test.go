package memory_test

import (
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) search.Store { return memory.New() })
}

// A decorator keeps every feature of the store, typo search included.
func TestStoreWrapped(t *testing.T) {
	storetest.RunWrapped(t, func(t *testing.T) search.Store { return memory.New() })
}
