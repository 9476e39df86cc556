// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk) against dream's MCP server:
// initialize (the negotiated version), tools/list, tools/call for every tool with what each must
// answer on the hand-written vault (tests/data/vault), a tool error with near candidates, bad
// arguments, and an unknown tool. Prints "ok: ..." lines; any failed check exits non-zero.
// Usage: node mcp_sdk.mjs MODULE_DIR stdio DREAM VAULT
//        node mcp_sdk.mjs MODULE_DIR http URL [TOKEN]   (with TOKEN: a client without it must be refused)
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const [moduleDir, mode, ...rest] = process.argv.slice(2);
const require = createRequire(moduleDir + '/');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { McpError, LATEST_PROTOCOL_VERSION } = require('@modelcontextprotocol/sdk/types.js');

let stderrText = '';
function transport(headers) {
  if (mode === 'stdio') {
    const [dream, vault] = rest;
    const t = new StdioClientTransport({ command: dream, args: ['mcp', '--wiki', vault, '--store', ''], stderr: 'pipe', env: process.env });
    t.stderr?.on('data', (d) => { stderrText += d; });
    return t;
  }
  return new StreamableHTTPClientTransport(new URL(rest[0]), headers ? { requestInit: { headers } } : undefined);
}

const token = mode === 'http' ? rest[1] : undefined;
if (token) {
  const c = new Client({ name: 'dream-test-nokey', version: '1.0.0' });
  await assert.rejects(c.connect(transport()), /401|Unauthorized|API key/i, 'a client without the token was let in');
  console.log('ok: a client without the bearer token is refused');
}

const client = new Client({ name: 'dream-test', version: '1.0.0' });
await client.connect(transport(token ? { Authorization: `Bearer ${token}` } : undefined));
const info = client.getServerVersion();
assert.equal(info.name, 'dream');
assert.ok(client.getServerCapabilities().tools, 'no tools capability');
if (mode === 'http') assert.equal(client.transport.protocolVersion, LATEST_PROTOCOL_VERSION);
console.log(`ok: ${mode}: initialize answered by ${info.name} ${info.version}`);

const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name), ['resolve', 'read', 'section', 'links', 'infobox', 'list', 'category', 'search', 'conversations', 'status']);
for (const t of tools) {
  assert.equal(t.inputSchema.type, 'object', t.name);
  assert.ok(t.description.length > 20, t.name);
  assert.equal(t.annotations?.readOnlyHint, true, t.name);
}
console.log(`ok: ${mode}: tools/list has ${tools.length} tools with schemas`);

// call NAME ARGS: the tool's JSON object; its text under 2 KB unless big is allowed.
async function call(name, args, { error = false, big = false } = {}) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(Boolean(r.isError), error, `${name} ${JSON.stringify(args)}: isError ${r.isError}: ${JSON.stringify(r.content)}`);
  assert.equal(r.content.length, 1);
  assert.equal(r.content[0].type, 'text');
  if (!big) assert.ok(r.content[0].text.length < 2048, `${name}: ${r.content[0].text.length} bytes, over the read budget`);
  return JSON.parse(r.content[0].text);
}

let o = await call('resolve', { name: 'natural leaven' });
assert.equal(o.stem, 'Sourdough');
assert.equal(o.matched, 'alias');
o = await call('read', { name: 'sourdough' });
assert.equal(o.stem, 'Sourdough');
assert.ok(o.sections.some((s) => s.anchor === 'feeding-schedule'), JSON.stringify(o.sections));
o = await call('read', { name: 'Sourdough', whole: true }, { big: true });
assert.match(o.text, /^---\naliases:\n  - natural leaven\n[\s\S]*?\n---\n\n# Sourdough\n/); // the file as it is, front matter first
o = await call('section', { name: 'Sourdough', anchor: 'feeding-schedule' });
assert.match(o.text, /twice/);
assert.equal(o.references[0].label, '2');
o = await call('links', { name: 'Sourdough' });
assert.equal(o.inbound[0].via, 'main');
o = await call('infobox', { name: 'Sourdough' });
assert.ok(o.fields.some((f) => f.key === 'type' && f.value === 'bread'), JSON.stringify(o.fields));
o = await call('list', { limit: 2, offset: 1 });
assert.equal(o.total, 6);
assert.equal(o.articles.length, 2);
o = await call('category', { category: 'Hobbies' });
assert.equal(o.total, 3);
assert.ok(o.members.some((m) => m.stem === 'Sourdough'));
o = await call('search', { query: 'rye flour' });
assert.equal(o.results[0].stem, 'Sourdough');
o = await call('status', {});
assert.equal(o.articles, 6);
console.log(`ok: ${mode}: tools/call answered every tool (resolve, read, read whole, section, links, infobox, list, category, search, status)`);

// a miss: a tool error carrying the near candidates
o = await call('resolve', { name: 'Sourdoh' }, { error: true });
assert.equal(o.status, 'missing');
assert.equal(o.candidates[0].stem, 'Sourdough');
o = await call('section', { name: 'Sourdough', anchor: 'nowhere' }, { error: true });
assert.ok(o.anchors.length > 0);
// arguments outside the schema: a tool error that says which
o = await call('read', {}, { error: true });
assert.match(o.error, /needs the argument 'name'/);
o = await call('list', { limit: 'ten' }, { error: true });
assert.match(o.error, /must be an integer/);
// an unknown tool: a JSON-RPC error -32602
await assert.rejects(client.callTool({ name: 'delete_everything', arguments: {} }), (e) => e instanceof McpError && e.code === -32602);
// still serving after all that
assert.deepEqual(await client.ping(), {});
console.log(`ok: ${mode}: a miss is a tool error with candidates, bad arguments a tool error, an unknown tool -32602`);

await client.close();
if (/Sanitizer|runtime error:/.test(stderrText)) {
  console.error(stderrText);
  throw new Error('sanitizer report from dream mcp');
}
console.log(`ok: ${mode}: closed cleanly`);
