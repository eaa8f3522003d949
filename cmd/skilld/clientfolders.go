package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/clientdirs"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/service"
)

// This file holds what push, pull, sync and install share: paths relative
// to the command's working directory, the workspace's skill list, and
// fetching one skill version's files.

// workDir is the directory project paths are relative to.
func (e *env) workDir() (string, error) {
	if e.dir != "" {
		return filepath.Abs(e.dir)
	}
	return os.Getwd()
}

// homeDir is the directory --user targets are in.
func (e *env) homeDir() (string, error) {
	if e.home != "" {
		return filepath.Abs(e.home)
	}
	return os.UserHomeDir()
}

// path resolves a path given on the command line against the command's
// working directory; with the process's own, it is left as given, so
// messages show it as typed.
func (e *env) path(p string) string {
	if e.dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.dir, p)
}

// listWorkspaceSkills returns every skill of the workspace, page by page.
func listWorkspaceSkills(ctx context.Context, c *apiCmd) ([]*service.SkillView, error) {
	var out []*service.SkillView
	p := service.ListSkillsParams{PageSize: service.MaxPageSize, Page: 1}
	for {
		page, err := request(ctx, c, service.OpSkillsList, p)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			if it.SkillView != nil && it.CatalogItem == nil {
				out = append(out, it.SkillView)
			}
		}
		if page.NextPageToken == "" || len(page.Items) == 0 {
			return out, nil
		}
		p.Page, p.PageToken = 0, page.NextPageToken
	}
}

// lockSource is where the skills of this command come from, as the lockfile
// records it. Call it after a request, which names the token's own
// workspace when none was given.
func (c *apiCmd) lockSource() clientdirs.Source {
	return clientdirs.Source{Server: strings.TrimRight(c.server, "/"), Workspace: c.workspace}
}

// fetchVersion downloads the files of version w.Version of skill w.ID and
// checks them against w.Digest: the server must name that digest for the
// version, and the files must hash to it, computed here as the server
// does (pack.New over paths, bytes and exec bits).
func fetchVersion(ctx context.Context, cl *httpapi.Client, w clientdirs.Want) (*pack.Package, error) {
	list, err := httpapi.Call(ctx, cl, service.OpSkillsListFiles, service.ListSkillFilesParams{SkillRef: service.SkillRef{ID: w.ID}, Version: w.Version})
	if err != nil {
		return nil, err
	}
	if list.Digest != w.Digest {
		return nil, skilld.Errorf(skilld.EINTEGRITY, "version %d of %s is %s on the server, not %s", w.Version, w.Name, list.Digest, w.Digest)
	}
	lim := pack.ArchiveLimits()
	if len(list.Files) > lim.MaxFiles {
		return nil, skilld.Errorf(skilld.ETOOLARGE, "version %d of %s has %d files, over the %d a package may hold", w.Version, w.Name, len(list.Files), lim.MaxFiles)
	}
	files := make([]pack.File, 0, len(list.Files))
	for _, f := range list.Files {
		data, err := fetchFile(ctx, cl, w, f, lim.MaxFileSize)
		if err != nil {
			return nil, err
		}
		files = append(files, pack.File{Path: f.Path, Data: data, Exec: f.Exec})
	}
	pkg, err := pack.New(files, lim)
	if err != nil {
		return nil, err
	}
	if pkg.Digest() != w.Digest {
		return nil, skilld.Errorf(skilld.EINTEGRITY, "the files of version %d of %s hash to %s, not %s", w.Version, w.Name, pkg.Digest(), w.Digest)
	}
	return pkg, nil
}

func fetchFile(ctx context.Context, cl *httpapi.Client, w clientdirs.Want, f skilld.PackageFile, max int64) ([]byte, error) {
	if f.Size < 0 || f.Size > max {
		return nil, skilld.Errorf(skilld.ETOOLARGE, "%s of %s is %d bytes, over the %d-byte file limit", f.Path, w.Name, f.Size, max)
	}
	body, _, err := cl.GetFileVersion(ctx, w.ID, f.Path, w.Version)
	if err != nil {
		return nil, fmt.Errorf("%s of %s: %w", f.Path, w.Name, err)
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, f.Size+1))
	if err != nil {
		return nil, fmt.Errorf("%s of %s: %w", f.Path, w.Name, err)
	}
	if int64(len(data)) != f.Size {
		return nil, skilld.Errorf(skilld.EINTEGRITY, "%s of %s: %d bytes received, %d listed", f.Path, w.Name, len(data), f.Size)
	}
	return data, nil
}
