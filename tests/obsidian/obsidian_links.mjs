// obsidian_links.mjs — reads a vault the way Obsidian does, with a Markdown parser that is not
// dream's (unified + remark-parse, remark-gfm for footnotes, remark-frontmatter and yaml for the
// front matter, @flowershow/remark-wiki-link for [[wikilinks]]), and resolves every link by
// Obsidian's rules:
//   - a link is [[path#subpath|shown]] in Markdown outside code (the parser knows what is code),
//     or a front matter property whose whole string value (or list item) is one;
//   - path names a note case-insensitively: by its name alone ("Sourdough" -> articles/Sourdough.md),
//     or by a path from the vault's root or ending one ("Sources/X" -> Sources/X.md); empty: the
//     note the link is in; an alias of the front matter is no link target (Obsidian writes
//     [[Note|alias]] for one, never [[alias]]);
//   - #^id lands on a block: a paragraph or list item ending in " ^id"; #Heading on a heading
//     of that text (case aside), the last of a nested "#A#B";
//   - a footnote's key ([[...|conv:HASH#MSG]] in a definition) must land on a block of a note
//     under Sources/, and its block's paragraph must name that message (`MSG`).
// It also checks that aliases and tags are lists of strings and that every tag is one Obsidian
// accepts. Prints OBSIDIAN-LINKS resolved=N total=M, OBSIDIAN-FOOTNOTES landed=N total=M and
// each link that failed; exits 1 when anything failed or there was nothing to check.
// Usage: node obsidian_links.mjs VAULT   (its node_modules must hold the packages above)
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { unified } from 'unified';
import remarkParse from 'remark-parse';
import remarkGfm from 'remark-gfm';
import remarkFrontmatter from 'remark-frontmatter';
import wikiLinkPlugin from '@flowershow/remark-wiki-link';
import YAML from 'yaml';

const vault = process.argv[2];
if (!vault) {
  console.error('usage: node obsidian_links.mjs VAULT');
  process.exit(2);
}

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.')) continue; // .git, .obsidian: not notes
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.md')) out.push(relative(vault, p).split(sep).join('/'));
  }
  return out;
}

const processor = unified().use(remarkParse).use(remarkGfm).use(remarkFrontmatter, ['yaml']).use(wikiLinkPlugin);

function visit(node, fn, parents = []) {
  fn(node, parents);
  for (const child of node.children || []) visit(child, fn, [...parents, node]);
}

function plainText(node) {
  if (node.type === 'text' || node.type === 'inlineCode') return node.value;
  if (node.type === 'wikiLink') return node.data?.alias ?? node.value;
  return (node.children || []).map(plainText).join('');
}

const problems = [];
const notes = new Map(); // path without .md -> {headings, blocks, blockText}
const links = [];        // {from, target, footnote}
const tagOk = /^(?=.*[^0-9/])[\p{L}\p{N}_\-/]+$/u;

for (const file of walk(vault, [])) {
  const text = readFileSync(join(vault, file), 'utf8');
  const tree = processor.runSync(processor.parse(text));
  const note = { headings: new Set(), blocks: new Map() };
  notes.set(file.replace(/\.md$/, ''), note);
  visit(tree, (node, parents) => {
    if (node.type === 'yaml') {
      let fm;
      try {
        fm = YAML.parse(node.value) ?? {};
      } catch (e) {
        problems.push(`${file}: front matter is not YAML: ${e.message}`);
        return;
      }
      for (const key of ['aliases', 'tags']) {
        if (fm[key] === undefined) continue;
        if (!Array.isArray(fm[key]) || !fm[key].every((v) => typeof v === 'string'))
          problems.push(`${file}: front matter '${key}' is not a list of strings: ${JSON.stringify(fm[key])}`);
      }
      for (const tag of Array.isArray(fm.tags) ? fm.tags : [])
        if (!tagOk.test(String(tag))) problems.push(`${file}: '${tag}' is no tag Obsidian accepts`);
      for (const [key, value] of Object.entries(fm))
        for (const v of Array.isArray(value) ? value : [value]) {
          const m = typeof v === 'string' && /^\[\[([^\]]+)\]\]$/.exec(v);
          if (m) links.push({ from: file, target: m[1].split('|')[0], footnote: null, where: `property ${key}` });
        }
    } else if (node.type === 'heading') {
      note.headings.add(plainText(node).trim().toLowerCase());
    } else if (node.type === 'paragraph') {
      const t = plainText(node);
      const m = /(?:^|\s)\^([A-Za-z0-9-]+)\s*$/.exec(t);
      if (m) note.blocks.set(m[1], t);
    } else if (node.type === 'wikiLink') {
      const def = parents.find((p) => p.type === 'footnoteDefinition');
      const alias = node.data?.alias;
      const footnote = def && alias && alias.startsWith('conv:') ? { label: def.label, key: alias } : null;
      links.push({ from: file, target: node.value, footnote, where: footnote ? `footnote [^${def.label}]` : 'text' });
    }
  });
}

// Obsidian's resolution of a link path to a note.
const byName = new Map();
for (const path of notes.keys()) {
  const name = path.split('/').pop().toLowerCase();
  if (!byName.has(name)) byName.set(name, []);
  byName.get(name).push(path);
}
function resolve(from, path) {
  if (path === '') return from.replace(/\.md$/, '');
  const want = path.replace(/\.md$/i, '').toLowerCase();
  if (!want.includes('/')) return (byName.get(want) || []).sort((a, b) => a.length - b.length)[0];
  return [...notes.keys()].filter((p) => p.toLowerCase() === want || p.toLowerCase().endsWith('/' + want)).sort((a, b) => a.length - b.length)[0];
}

let resolved = 0, landed = 0, footnotes = 0;
for (const l of links) {
  const hash = l.target.indexOf('#');
  const path = (hash < 0 ? l.target : l.target.slice(0, hash)).trim();
  const sub = hash < 0 ? '' : l.target.slice(hash + 1);
  const dest = resolve(l.from, path);
  let ok = dest !== undefined, why = ok ? '' : 'no such note';
  if (ok && sub.startsWith('^')) {
    ok = notes.get(dest).blocks.has(sub.slice(1));
    if (!ok) why = `${dest}.md has no block ^${sub.slice(1)}`;
  } else if (ok && sub) {
    const heading = sub.split('#').pop().trim().toLowerCase();
    ok = notes.get(dest).headings.has(heading);
    if (!ok) why = `${dest}.md has no heading '${heading}'`;
  }
  if (ok) resolved++;
  else problems.push(`${l.from}: ${l.where}: [[${l.target}]] does not resolve: ${why}`);
  if (!l.footnote) continue;
  footnotes++;
  const msg = l.footnote.key.slice(l.footnote.key.indexOf('#') + 1);
  const inSources = dest !== undefined && dest.startsWith('Sources/');
  const block = ok && sub.startsWith('^') ? notes.get(dest).blocks.get(sub.slice(1)) : undefined;
  if (inSources && block !== undefined && block.includes(msg)) landed++;
  else problems.push(`${l.from}: footnote [^${l.footnote.label}] (${l.footnote.key}) does not land on its message in a Sources note`);
}

for (const p of problems) console.log(`unresolved: ${p}`);
console.log(`OBSIDIAN-LINKS resolved=${resolved} total=${links.length}`);
console.log(`OBSIDIAN-FOOTNOTES landed=${landed} total=${footnotes}`);
process.exit(problems.length || links.length === 0 || footnotes === 0 ? 1 : 0);
