package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/units"
	"github.com/skilld/skilld/service"
)

// catalogCommands is the "skilld catalog" group: registries and their items.
func catalogCommands() []command {
	return []command{
		{"registries", "list catalog registries", runCatalogRegistries},
		{"create-registry", "add a registry (instance admins)", runCatalogCreateRegistry},
		{"items", "list catalog items", runCatalogItems},
		{"publish", "publish an archive or folder as an item's next version (instance admins)", runCatalogPublish},
		{"update", "move an installed skill to another catalog version, --eval gating it on its trigger evals (admins)", runCatalogUpdate},
		{"findings", "show what the security scanner found in an item version (table, --json or --sarif)", runCatalogFindings},
	}
}

func runCatalogUpdate(ctx context.Context, e *env, args []string) int {
	return updateInstalled(ctx, e, "catalog update", args)
}

func runCatalogRegistries(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "catalog registries", "")
	if code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	list, ok := call(ctx, c, service.OpCatalogRegistriesList, service.ListRegistriesParams{Page: service.Page{PageSize: service.MaxPageSize}})
	if !ok {
		return exitFailure
	}
	return c.output(list, func(w io.Writer) {
		row(w, "NAME", "TRUST", "ID")
		for _, r := range list.Items {
			row(w, r.Name, r.Trust, r.ID)
		}
	})
}

func runCatalogCreateRegistry(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "catalog create-registry", "NAME --trust official|verified|community [--public-key FILE]")
	trust := c.fs.String("trust", "", "how far the registry is trusted: official, verified or community")
	keyFile := c.fs.String("public-key", "", "PEM public key file that keyed signatures on the registry's items verify against")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	if *trust == "" {
		return usageErrorf(c.fs, "--trust is required")
	}
	key, err := readOptional(*keyFile)
	if err != nil {
		return c.localError(err)
	}
	r, ok := call(ctx, c, service.OpCatalogRegistriesCreate, service.CreateRegistryParams{Name: c.args[0], Trust: skilld.Trust(*trust), PublicKey: key})
	if !ok {
		return exitFailure
	}
	return c.output(r, func(w io.Writer) {
		row(w, "NAME", "TRUST", "ID")
		row(w, r.Name, r.Trust, r.ID)
	})
}

func runCatalogItems(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "catalog items", "[--search TEXT] [--registry NAME] [--page N] [--page-size N]")
	var p service.ListCatalogItemsParams
	c.fs.StringVar(&p.Search, "search", "", "only items whose name or description contains TEXT")
	c.fs.StringVar(&p.Registry, "registry", "", "only items of this registry")
	c.fs.IntVar(&p.Page, "page", 1, "page number")
	c.fs.IntVar(&p.PageSize, "page-size", service.DefaultPageSize, "items per page")
	if code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	page, ok := call(ctx, c, service.OpCatalogItemsList, p)
	if !ok {
		return exitFailure
	}
	return c.output(page, func(w io.Writer) {
		row(w, "ITEM", "VERSION", "TRUST", "DESCRIPTION")
		for _, it := range page.Items {
			row(w, it.Registry+"/"+it.Name, it.LatestVersion, it.Trust, short(it.Description, 60))
		}
		fmt.Fprintf(w, "\n%d items\n", page.Total)
	})
}

func runCatalogPublish(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "catalog publish", "REGISTRY PATH [--name NAME] [--description TEXT] [--lenient] [--bundle FILE]\n\n"+
		"PATH is an archive or a skill folder; the item is named after the skill. --bundle is a Sigstore\n"+
		"bundle signing the package's manifest (skilld pack --manifest prints it), kept with the version.")
	var o service.SkillOptions
	optionFlags(c, &o)
	bundleFile := c.fs.String("bundle", "", "Sigstore bundle (JSON) file signing the package digest")
	if code, ok := c.parse(args, 2, 2); !ok {
		return code
	}
	bundle, err := readOptional(*bundleFile)
	if err != nil {
		return c.localError(err)
	}
	archive, size, done, err := localArchive(ctx, c.args[1])
	if err != nil {
		return c.localError(err)
	}
	defer done()
	fmt.Fprintf(e.stderr, "uploading %s (%s)…\n", c.args[1], units.Bytes(size))
	cl, err := c.client(ctx, service.OpCatalogItemsPublish.Operation)
	var item *service.PublishedItem
	if err == nil {
		item, err = cl.Publish(ctx, c.args[0], archive, size, o, bundle)
	}
	if err != nil {
		return c.fail(err)
	}
	return c.output(item, func(w io.Writer) {
		row(w, "ITEM", "VERSION", "DIGEST", "ID")
		row(w, item.Registry+"/"+item.Name, item.Version, shortDigest(item.Digest), item.ID)
		if s := item.Signature; s != nil {
			fmt.Fprintf(w, "\nsignature: %s\n", signatureText(s))
		}
		if item.Unchanged {
			fmt.Fprintf(w, "\nunchanged: version %d already holds these files; no version was made\n", item.Version)
		}
	})
}

// readOptional reads a small local file named by a flag; "" reads nothing.
func readOptional(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", skilld.Errorf(skilld.EINVALID, "%v", err)
	}
	return string(b), nil
}

// signatureText is one line about a version's signature.
func signatureText(s *skilld.SignatureStatus) string {
	who := s.KeyID
	if s.Subject != "" {
		who = s.Subject + " (" + s.Issuer + ")"
	}
	if !s.Verified {
		return "not verified: " + s.Error
	}
	return "verified, signed by " + who
}
