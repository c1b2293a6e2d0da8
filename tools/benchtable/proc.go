package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// readFirst returns the value of the first "key: value" line of a file.
func readFirst(path, key string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s: no %s", path, key)
}
