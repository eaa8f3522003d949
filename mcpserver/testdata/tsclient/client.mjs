// Drives a skilld MCP server with the official MCP TypeScript SDK, as a
// real client would: list, activate, read a file, read a resource, and the
// Skills extension's skills/list, resources/directory/read and
// skill://index.json. It prints one JSON report on stdout; the
// Go test (cmd/skilld/mcp_test.go) checks its content. Any failure exits 1
// with the reason on stderr.
//
//   node client.mjs stdio <skilld binary> <args…>   (token in SKILLD_TOKEN)
//   node client.mjs http <url>                       (token in SKILLD_TOKEN)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, target, ...rest] = process.argv.slice(2);
const token = process.env.SKILLD_TOKEN;
if (!token) {
  console.error("SKILLD_TOKEN is not set");
  process.exit(2);
}

let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: rest, env: { ...process.env }, stderr: "inherit" });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(target), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
} else {
  console.error("usage: client.mjs stdio BIN ARGS… | http URL");
  process.exit(2);
}

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");

const client = new Client({ name: "skilld-tsclient", version: "1.0.0" });
try {
  await client.connect(transport);
  const caps = client.getServerCapabilities() ?? {};
  const tools = (await client.listTools()).tools;
  const activate = tools.find((t) => t.name === "activate_skill");
  const listed = JSON.parse(text(await client.callTool({ name: "list_skills", arguments: {} })));
  const activated = await client.callTool({ name: "activate_skill", arguments: { skill_name: "lint" } });
  const file = await client.callTool({ name: "read_skill_file", arguments: { skill_name: "lint", path: "references/rules.md" } });
  const withheld = await client.callTool({ name: "activate_skill", arguments: { skill_name: "risky" } });
  const resources = (await client.listResources()).resources;
  const resource = await client.readResource({ uri: "skill://lint/SKILL.md" });
  const skills = await client.request({ method: "skills/list", params: {} }, ResultSchema);
  const dir = async (uri) =>
    (await client.request({ method: "resources/directory/read", params: { uri } }, ResultSchema)).resources.map((r) => ({
      uri: r.uri,
      mimeType: r.mimeType,
    }));
  const directories = { root: await dir("skill://lint"), references: await dir("skill://lint/references") };
  const index = JSON.parse((await client.readResource({ uri: "skill://index.json" })).contents[0].text);
  console.log(JSON.stringify({
    serverName: client.getServerVersion()?.name,
    extensions: Object.keys(caps.extensions ?? {}),
    directoryRead: caps.extensions?.["io.modelcontextprotocol/skills"]?.directoryRead ?? false,
    tools: tools.map((t) => t.name).sort(),
    enum: activate?.inputSchema?.properties?.skill_name?.enum ?? [],
    listed: listed.skills.map((s) => s.name),
    activated: text(activated),
    activatedError: activated.isError ?? false,
    file: text(file),
    withheldError: withheld.isError ?? false,
    withheldText: text(withheld),
    resources: resources.map((r) => ({ uri: r.uri, digest: r._meta?.["skilld/digest"] })),
    resourceText: resource.contents[0]?.text,
    resourceCache: { ttlMs: resource.ttlMs, cacheScope: resource.cacheScope },
    skillsList: skills.skills.map((s) => ({ uri: s.uri, name: s.frontmatter?.name, files: s.resources.length })),
    directories,
    index: index.skills.map((s) => ({ name: s.name, url: s.url, digest: s.digest })),
  }));
  await client.close();
} catch (err) {
  console.error(`tsclient (${mode}): ${err?.stack ?? err}`);
  process.exit(1);
}
