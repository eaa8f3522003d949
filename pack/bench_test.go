package pack_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/skilld/skilld/pack"
)

const benchSize = 5 << 20

// benchFiles is 200 files totalling exactly 5 MiB of pseudo-random text-like
// bytes (compressible about 2:1, like source code), in a few folders.
func benchFiles() []pack.File {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyz     \n\n{}()=;.,_0123456789"
	data := make([]byte, benchSize)
	for i := range data {
		data[i] = alphabet[rng.IntN(len(alphabet))]
	}
	files := make([]pack.File, 200)
	per := benchSize / len(files)
	for i := range files {
		end := (i + 1) * per
		if i == len(files)-1 {
			end = benchSize
		}
		files[i] = pack.File{Path: fmt.Sprintf("dir%d/file%03d.txt", i%7, i), Data: data[i*per : end], Exec: i%10 == 0}
	}
	return files
}

func BenchmarkDigest5MB200Files(b *testing.B) {
	files := benchFiles()
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pack.New(files, pack.ArchiveLimits()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadZip5MB(b *testing.B) {
	var zs []zipFile
	for _, f := range benchFiles() {
		zs = append(zs, zipFile{Name: "skill/" + f.Path, Data: f.Data, Deflate: true})
	}
	z := buildZip(b, zs...)
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pack.ReadZip(context.Background(), bytes.NewReader(z), int64(len(z)), pack.ArchiveLimits()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(z)), "zip-bytes")
}

func BenchmarkReadDir200Files(b *testing.B) {
	dir := b.TempDir()
	writeTree(b, dir, benchFiles())
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pack.ReadDir(context.Background(), dir, pack.ArchiveLimits()); err != nil {
			b.Fatal(err)
		}
	}
}
