#!/usr/bin/env python3
"""Builds corpus.jsonl.gz, the retrieval test's skills and queries, from
public skill repositories mirrored as bare git directories (one argument
each: a path to the repository's git directory, named owner+name).

Each SKILL.md with a name and a description of 20 characters or more
becomes one line: {"repo", "commit", "path", "name", "description",
"headings", "queries": {"description": ..., "body": ...}}. A name seen
before (the same skill in two collections) is skipped, so that every
query has one right answer. Of the templated per-app skills of
ComposioHQ/awesome-claude-skills (composio-skills/*) every fourth is kept,
so that they do not make up most of the corpus.

Queries are derived mechanically, never from the name:
  - description: the description's first sentence, with the skill's name
    (as written, and with its hyphens read as spaces) removed, and
    "Use when"/"This skill" lead-ins dropped; its first 14 words.
  - body: the first sentence of prose in the SKILL.md body (not a
    heading, code, table, list item, quote or link line) of six words or
    more, the name removed the same way; its first 14 words. The body is
    not indexed (only its headings are), so these are the harder queries.
"""
import gzip, json, re, subprocess, sys

sys.path.insert(0, '')
import yaml

HEADING = re.compile(r'^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$')

def git(repo, *args):
    return subprocess.run(['git', '-C', repo, *args], check=True, capture_output=True).stdout

def split(md):
    if md.startswith('\ufeff'):
        md = md[1:]
    lines = md.split('\n')
    if lines and lines[0].strip() == '---':
        for i in range(1, len(lines)):
            if lines[i].strip() == '---':
                return '\n'.join(lines[1:i]), '\n'.join(lines[i + 1:])
    return None, md

def headings(body):
    out, fence = [], None
    for line in body.split('\n'):
        s = line.lstrip(' ')
        if len(line) - len(s) > 3:
            continue
        m = re.match(r'^(`{3,}|~{3,})', s)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1).startswith(fence) and s.strip(fence[0]).strip() == '':
                fence = None
            continue
        if fence:
            continue
        h = HEADING.match(s)
        if h and h.group(2):
            t = re.sub(r'(?:^|[ \t])#+$', '', h.group(2)).strip()
            if t:
                out.append(t[:120])
        if len(out) >= 40:
            break
    return out

def unname(text, name):
    for form in {name, name.replace('-', ' '), name.replace('_', ' ')}:
        text = re.sub(re.escape(form), ' ', text, flags=re.I)
    return re.sub(r'\s+', ' ', text).strip()

def first_sentence(text):
    m = re.search(r'(.+?[.!?])(\s|$)', text)
    return m.group(1) if m else text

def words(text, n=14):
    return ' '.join(text.split()[:n])

LEADIN = re.compile(r'^(this skill( should be used)?|use (this skill )?when|use when|when)\b[ ,:]*', re.I)

def description_query(desc, name):
    q = unname(first_sentence(' '.join(desc.split())), name)
    q = LEADIN.sub('', q)
    return words(q)

def body_query(body, name):
    fence = None
    for line in body.split('\n'):
        s = line.strip()
        if re.match(r'^(`{3,}|~{3,})', s):
            fence = None if fence else s[:3]
            continue
        if fence or not s or s[0] in '#|-*>![<`' or re.match(r'^\d+[.)]', s) or s.startswith('**') and s.endswith('**'):
            continue
        sent = unname(first_sentence(re.sub(r'[*_`\[\]]|\(http[^)]*\)', '', s)), name)
        if len(sent.split()) >= 6:
            return words(sent)
    return ''

def main(repos):
    seen, out = set(), []
    for repo in repos:
        owner_name = repo.rstrip('/').split('/')[-2].replace('+', '/', 1)
        commit = git(repo, 'rev-parse', 'HEAD').decode().strip()
        paths = [p for p in git(repo, 'ls-tree', '-r', '--name-only', 'HEAD').decode().split('\n') if p.endswith('SKILL.md')]
        composio = sorted(p for p in paths if p.startswith('composio-skills/'))
        keep_composio = set(composio[::4])
        for path in sorted(paths):
            if path.startswith('composio-skills/') and path not in keep_composio:
                continue
            try:
                md = git(repo, 'show', f'HEAD:{path}').decode('utf-8')
            except (subprocess.CalledProcessError, UnicodeDecodeError):
                continue
            fm, body = split(md)
            if fm is None:
                continue
            try:
                meta = yaml.safe_load(fm)
            except yaml.YAMLError:
                continue
            if not isinstance(meta, dict):
                continue
            name, desc = meta.get('name'), meta.get('description')
            if not isinstance(name, str) or not isinstance(desc, str) or len(desc.strip()) < 20:
                continue
            name = name.strip()
            if name.lower() in seen:
                continue
            seen.add(name.lower())
            qd, qb = description_query(desc, name), body_query(body, name)
            out.append({'repo': owner_name, 'commit': commit, 'path': path, 'name': name,
                        'description': ' '.join(desc.split()), 'headings': headings(body),
                        'queries': {'description': qd, 'body': qb}})
    with gzip.open('corpus.jsonl.gz', 'wt', encoding='utf-8', compresslevel=9) as f:
        for o in out:
            f.write(json.dumps(o, ensure_ascii=False, sort_keys=True) + '\n')
    print(len(out), 'skills', file=sys.stderr)

if __name__ == '__main__':
    main(sys.argv[1:])
