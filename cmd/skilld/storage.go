package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/bloburl"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storeurl"
)

// storageFlags are the flags of every command that opens skilld's storage.
// Each has an environment variable, so a deployment sets them once.
type storageFlags struct {
	data  string
	db    string
	blobs string
	work  string
}

func (f *storageFlags) register(fs *flag.FlagSet) {
	f.registerStores(fs)
	fs.StringVar(&f.work, "work-dir", os.Getenv("SKILLD_WORK_DIR"),
		"task sandboxes go in <work-dir>/sandboxes/<task id>/workspace and serve's skill cache in\n"+
			"<work-dir>/skill-cache; a fast local file system helps (env SKILLD_WORK_DIR; default <data>/work).\n"+
			"skilld run --skills uses a private temporary folder instead, and its cache is --cache-dir")
}

// registerStores registers the flags of the database and the blob store
// only, for a command that runs no tasks.
func (f *storageFlags) registerStores(fs *flag.FlagSet) {
	fs.StringVar(&f.data, "data", cmp.Or(os.Getenv("SKILLD_DATA"), "skilld-data"),
		"directory for the default SQLite database and blob store (env SKILLD_DATA)")
	secretVar(fs, &f.db, "db", "SKILLD_DB",
		"metadata database `URL`: sqlite:///PATH or postgres://…; default sqlite in --data")
	fs.StringVar(&f.blobs, "blobs", os.Getenv("SKILLD_BLOBS"),
		"blob store URL: file:///PATH or s3://BUCKET/PREFIX?endpoint=… (env SKILLD_BLOBS; default files in --data)")
}

// urls returns the database and blob store URLs, defaulting both to the
// data directory.
func (f *storageFlags) urls() (db, blobs string, err error) {
	data, err := filepath.Abs(f.data)
	if err != nil {
		return "", "", err
	}
	db = cmp.Or(f.db, "sqlite://"+filepath.ToSlash(filepath.Join(data, "skilld.db")))
	blobs = cmp.Or(f.blobs, "file://"+filepath.ToSlash(filepath.Join(data, "blobs")))
	return db, blobs, nil
}

// openDB opens the metadata database.
func (f *storageFlags) openDB(ctx context.Context, opts *store.Options) (store.Store, error) {
	dbURL, _, err := f.urls()
	if err != nil {
		return nil, err
	}
	return storeurl.Open(ctx, dbURL, opts)
}

// openAll opens the database and the blob store, closing the first if the
// second fails, creating both when they do not exist yet (serve).
func (f *storageFlags) openAll(ctx context.Context) (store.Store, blob.Store, error) {
	return f.open(ctx, storeurl.Open)
}

// openExisting opens a server's storage for a command that works on it
// (mcp, fsck, run --agent, worker): a data dir or database that is not
// there is refused, naming the flags that choose it, before anything is
// created, instead of working on a new empty database where no token is
// valid and no skill exists.
func (f *storageFlags) openExisting(ctx context.Context) (store.Store, blob.Store, error) {
	db, blobs, err := f.open(ctx, storeurl.OpenExisting)
	if !errors.Is(err, storeurl.ErrNoDatabase) {
		return db, blobs, err
	}
	where := "--db " + redactURL(f.db)
	if f.db == "" {
		where = "--data " + f.data
		if data, aerr := filepath.Abs(f.data); aerr == nil {
			if _, serr := os.Stat(data); errors.Is(serr, fs.ErrNotExist) {
				err = skilld.Errorf(skilld.ENOTFOUND, "the data dir %s does not exist", data)
			}
		}
	}
	return nil, nil, skilld.Errorf(skilld.ENOTFOUND, "%s (%s): pass --data with the data dir skilld serve uses, or --db with its database URL; "+
		"this command creates no storage (skilld serve does)", skilld.ErrorMessage(err), where)
}

func (f *storageFlags) open(ctx context.Context, openDB func(context.Context, string, *store.Options) (store.Store, error)) (store.Store, blob.Store, error) {
	dbURL, blobsURL, err := f.urls()
	if err != nil {
		return nil, nil, err
	}
	db, err := openDB(ctx, dbURL, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the database: %w", err)
	}
	blobs, err := bloburl.Open(ctx, blobsURL)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("opening the blob store: %w", err), db.Close())
	}
	// The database drivers mark their own errors; the blob drivers' are
	// marked here, once, so metrics can tell the two apart.
	return db, blob.Marked(blobs), nil
}

// adminHint is the command that mints an instance-admin token on this
// storage, for messages that point to it.
func (f *storageFlags) adminHint() string {
	if f.db != "" {
		return "skilld tokens create --admin --db <this server's database URL>"
	}
	data, err := filepath.Abs(f.data)
	if err != nil {
		data = f.data
	}
	return "skilld tokens create --admin --data " + data
}

// workDir returns the folder for task sandboxes and the skill cache.
func (f *storageFlags) workDir() (string, error) {
	if f.work != "" {
		return filepath.Abs(f.work)
	}
	data, err := filepath.Abs(f.data)
	return filepath.Join(data, "work"), err
}
