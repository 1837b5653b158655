#!/usr/bin/env python3
"""tests/editors/check.py: the editor grammars of dsl/ and the man page
against the compiler, so that neither can fall behind the language unseen.

  lists    the reserved words of parser/lexer.re (cross-checked with the
           %token display names of parser/grammar.y) and the built-in
           values, functions, regions, faces and block marks of codegen/sema/builtins.c equal
           the word lists of dsl/vim/syntax/stn.vim and of
           dsl/vscode/syntaxes/stn.tmLanguage.json
  tokens   a reference tokenizer (the rules of parser/lexer.re in Python)
           says what each character of every example and of two generated
           samples (every word of the lists above; every malformed token)
           must be highlighted as; the TextMate grammar, run by a small
           TextMate engine here, and vim (when installed: vim -Es, synID()
           at every byte) must agree, character by character
  manpage  every option of stencilc's usage text (codegen/driver/main.c) and every
           -stn_ option of the generated program (codegen/emit/emit_c.c) appears
           in docs/stencilc.1

Prints "editors: ...: ok" or "FAIL: ..." lines; exits 1 when a check failed.
Needs python3 (3.11 or later: the grammar uses atomic groups) and nothing
else; vim is used when found.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VIM_SYNTAX = 'dsl/vim/syntax/stn.vim'
TM_GRAMMAR = 'dsl/vscode/syntaxes/stn.tmLanguage.json'
MAN_PAGE = 'docs/stencilc.1'
failures = 0


def ok(what):
    print(f'editors: {what}: ok')


def fail(what, *details):
    global failures
    failures += 1
    print(f'FAIL: editors: {what}')
    for d in details[:12]:
        print(f'  {d}')
    if len(details) > 12:
        print(f'  ... and {len(details) - 12} more')


def read(path):
    with open(os.path.join(ROOT, path), encoding='utf-8') as f:
        return f.read()


# ---- the compiler's word lists ----

def c_table(text, array, key):
    """The names of a designated-initializer table: [KEY_X] = {"name", ...}."""
    body = re.search(r'\b' + array + r'\[[A-Z_]+\]\s*=\s*\{(.*?)\n\};', text, re.S)
    return re.findall(r'\[' + key + r'_[A-Z0-9_]+\]\s*=\s*\{\s*"([^"]+)"', body.group(1)) if body else []


def c_list(text, array):
    """The strings of a one-line table: array[N] = {"a", "b"};"""
    m = re.search(r'\b' + array + r'\[[A-Z_]+\]\s*=\s*\{([^}]*)\}', text)
    return re.findall(r'"([^"]+)"', m.group(1)) if m else []


def enum_count(text, enum):
    m = re.search(r'typedef enum ' + enum + r'\s*\{(.*?)\}', text, re.S)
    body = re.sub(r'/\*.*?\*/', '', m.group(1), flags=re.S) if m else ''
    return len([e for e in re.findall(r'\b[A-Z][A-Z0-9_]*\b', body) if not e.endswith('_COUNT')])


def compiler_lists():
    lexer = read('parser/lexer.re')
    block = lexer[lexer.index('/*!re2c'):]
    pairs = re.findall(r'^\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*\{[^}]*\b(KW_[A-Z_]+)\b', block, re.M)
    keywords = [w for w, _ in pairs]
    grammar = re.findall(r"^%token\s+(KW_[A-Z_]+)\s+\"'([^']+)'\"", read('parser/grammar.y'), re.M)
    if not keywords or sorted(pairs, key=lambda p: p[1]) != sorted(((w, k) for k, w in grammar), key=lambda p: p[1]):
        fail('the reserved words of parser/lexer.re and the KW_ tokens of parser/grammar.y differ '
             '(or this script no longer finds them)',
             f'lexer.re: {sorted(pairs)}', f'grammar.y: {sorted((w, k) for k, w in grammar)}')
    builtins_c, builtins_h = read('codegen/sema/builtins.c'), read('codegen/sema/builtins.h')
    lists = {
        'keyword': set(keywords),
        'value': set(c_table(builtins_c, 'builtin_values', 'BV')),
        'function': set(c_table(builtins_c, 'builtin_funcs', 'BF')),
        'region': set(c_list(builtins_c, 'region_words')) | set(c_list(builtins_c, 'face_names')),
        'mark': set(c_list(builtins_c, 'block_marks')),
    }
    expected = {'value': enum_count(builtins_h, 'BuiltinValue'), 'function': enum_count(builtins_h, 'BuiltinFunc'),
                'region': enum_count(builtins_h, 'RegionWord') + enum_count(builtins_h, 'Face'),
                'mark': enum_count(builtins_h, 'BlockMark')}
    for kind, n in expected.items():
        if n == 0 or len(lists[kind]) != n:
            fail(f'codegen/sema/builtins.c: found {len(lists[kind])} {kind} names, builtins.h declares {n}: '
                 'has the table changed shape? Update this script')
    return lists


# ---- the word lists of the grammars ----

VIM_GROUPS = {  # syntax group -> (list, class)
    'stnDeclaration': ('keyword', 'keyword'), 'stnKeyword': ('keyword', 'keyword'),
    'stnConditional': ('keyword', 'keyword'), 'stnLogical': ('keyword', 'keyword'),
    'stnBuiltinValue': ('value', 'builtin-value'), 'stnConstant': ('value', 'constant'),
    'stnBuiltinFunc': ('function', 'builtin-function'), 'stnRegion': ('region', 'region'),
    'stnMark': ('mark', 'mark'),
    'stnTodo': (None, 'comment'),
}
VIM_CLASS = {g: c for g, (_, c) in VIM_GROUPS.items()}
VIM_CLASS.update({
    '': 'none', 'stnFunction': 'function', 'stnOperator': 'operator', 'stnInteger': 'integer', 'stnFloat': 'float',
    'stnString': 'string', 'stnEscape': 'escape', 'stnComment': 'comment', 'stnError': 'invalid',
    'stnBadNumber': 'invalid', 'stnBadEscape': 'invalid', 'stnUnterminated': 'invalid',
})

TM_LISTS = {  # repository entry -> list
    'keyword': 'keyword', 'builtin-value': 'value', 'call': 'function', 'region': 'region', 'mark': 'mark',
}
TM_CLASS = {
    'storage.type.stn': 'keyword', 'keyword.other.stn': 'keyword', 'keyword.control.conditional.stn': 'keyword',
    'keyword.operator.logical.stn': 'keyword',
    'variable.language.stn': 'builtin-value', 'constant.language.stn': 'constant',
    'support.function.builtin.stn': 'builtin-function', 'entity.name.function.stn': 'function',
    'entity.name.label.stn': 'region', 'storage.modifier.stn': 'mark',
    'constant.numeric.integer.stn': 'integer', 'constant.numeric.float.stn': 'float',
    'comment.line.number-sign.stn': 'comment', 'punctuation.definition.comment.stn': 'comment',
    'string.quoted.double.stn': 'string', 'punctuation.definition.string.begin.stn': 'string',
    'punctuation.definition.string.end.stn': 'string', 'constant.character.escape.stn': 'escape',
}


def tm_class(scope):
    if scope in TM_CLASS:
        return TM_CLASS[scope]
    if scope.startswith('invalid.illegal.') and scope.endswith('.stn'):
        return 'invalid'
    if scope.startswith('keyword.operator.') and scope.endswith('.stn'):
        return 'operator'
    if scope.startswith('punctuation.') and scope.endswith('.stn'):
        return 'punctuation'
    return None


def vim_lists():
    got = {}
    for line in read(VIM_SYNTAX).splitlines():
        m = re.match(r'\s*syn(?:tax)?\s+keyword\s+(\w+)\s+(.*)', line)
        if not m:
            continue
        if m.group(1) not in VIM_GROUPS:
            fail(f'{VIM_SYNTAX}: keyword group {m.group(1)} is unknown to this script (add it to VIM_GROUPS)')
            continue
        words = [w for w in m.group(2).split() if not w.startswith('contained') and '=' not in w]
        got.setdefault(VIM_GROUPS[m.group(1)][0], []).extend(words)
    got.pop(None, None)
    return got


def tm_lists(grammar):
    got = {}
    for entry, kind in TM_LISTS.items():
        for rule in grammar['repository'][entry]['patterns']:
            m = re.match(r'\\b\(\?:([A-Za-z0-9_|]+)\)\\b', rule.get('match', ''))
            if m:
                got.setdefault(kind, []).extend(m.group(1).split('|'))
    return got


def compare_lists(where, got, want):
    bad = []
    for kind, words in want.items():
        have = got.get(kind, [])
        dup = sorted({w for w in have if have.count(w) > 1})
        if dup:
            bad.append(f'{kind}: listed twice: {" ".join(dup)}')
        if set(have) != words:
            missing, extra = sorted(words - set(have)), sorted(set(have) - words)
            bad.append(f'{kind}: missing {" ".join(missing) or "-"}; not in the compiler {" ".join(extra) or "-"}')
    if bad:
        fail(f'{where}: word lists differ from the compiler\'s', *bad)
    else:
        ok(f'{where}: word lists equal the compiler\'s')


# ---- the reference tokenizer: parser/lexer.re in Python ----

NUM = r'\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+'
TOKEN = re.compile(r'''
    (?P<blank>[ \t\r\n\f\v]+)
  | (?P<comment>\#[^\n]*)
  | (?P<badnumber>(?>''' + NUM + r'''|\d+)[A-Za-z_.][A-Za-z0-9_.]*)
  | (?P<float>''' + NUM + r''')
  | (?P<integer>\d+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\[^\n])*")
  | (?P<badstring>"(?:[^"\\\n]|\\[^\n])*)
  | (?P<operator>==|!=|<=|>=|[-+*/^<>=&])
  | (?P<punctuation>[(){}\[\],;:])
  | (?P<badname>[^\x00-\x7f](?:[^\x00-\x7f]|[A-Za-z0-9_])*)
  | (?P<bad>.)
''', re.X)


def expected_classes(text, lists):
    """Per line, the class each character must have (None: blank, don't care)."""
    out = []
    for line in text.split('\n'):
        want = [None] * len(line)
        for m in TOKEN.finditer(line):
            kind, a, b = m.lastgroup, m.start(), m.end()
            cls = kind
            if kind == 'blank':
                continue
            if kind in ('badnumber', 'badstring', 'badname', 'bad'):
                cls = 'invalid'
            elif kind == 'ident':
                w, rest = m.group(), line[b:]
                if w in lists['keyword']:
                    cls = 'keyword'
                elif w in lists['value']:
                    cls = 'constant' if w in ('pi', 'inf', 'true', 'false') else 'builtin-value'
                elif re.match(r'[ \t]*\(', rest):
                    cls = 'builtin-function' if w in lists['function'] else 'function'
                elif w in lists['region'] and re.match(r'[ \t]*[:&,>;]', rest):
                    cls = 'region'
                elif w in lists['mark'] and re.match(r'[ \t]*\{', rest):
                    cls = 'mark'
                else:
                    cls = 'none'
            want[a:b] = [cls] * (b - a)
            if kind == 'string':
                for e in re.finditer(r'\\.', m.group()):
                    want[a + e.start():a + e.end()] = ['escape' if e.group() in ('\\"', '\\\\') else 'invalid'] * 2
        out.append(want)
    return out


# ---- a small TextMate engine (the subset the grammar uses) ----

class TextMate:
    def __init__(self, grammar):
        self.g = grammar
        self.re = {}

    def regex(self, src):
        if src not in self.re:
            self.re[src] = re.compile(src)
        return self.re[src]

    def rules(self, patterns):
        out = []
        for p in patterns:
            if 'include' in p:
                r = self.g['repository'][p['include'][1:]]
                out += self.rules(r['patterns']) if 'match' not in r and 'begin' not in r else [r]
            else:
                out.append(p)
        return out

    def all_rules(self):
        todo, seen = self.rules(self.g['patterns']), []
        while todo:
            r = todo.pop()
            seen.append(r)
            todo += self.rules(r.get('patterns', []))
        return seen

    @staticmethod
    def paint(scopes, a, b, names):
        for i in range(a, b):
            scopes[i] = scopes[i] + [n for n in names if n]

    def captures(self, scopes, m, caps):
        for k, c in (caps or {}).items():
            if m.group(int(k)) is not None:
                self.paint(scopes, m.start(int(k)), m.end(int(k)), [c.get('name')])

    def tokenize(self, text):
        """Per line, the scope stack of each character."""
        stack, out = [], []  # stack: open begin/end rules
        for line in text.split('\n'):
            line += '\n'  # as VS Code passes each line to Oniguruma
            scopes = [[] for _ in line]
            pos = 0
            while pos <= len(line):
                outer = [n for r in stack for n in (r.get('name'), r.get('contentName'))]
                cands = []
                if stack:
                    m = self.regex(stack[-1]['end']).search(line, pos)
                    if m:
                        cands.append((m.start(), -1, m, None))
                for i, r in enumerate(self.rules(stack[-1].get('patterns', []) if stack else self.g['patterns'])):
                    m = self.regex(r['match'] if 'match' in r else r['begin']).search(line, pos)
                    if m:
                        cands.append((m.start(), i, m, r))
                if not cands:
                    break
                start, _, m, r = min(cands, key=lambda c: (c[0], c[1]))
                self.paint(scopes, pos, start, outer)
                if r is None:  # the end of the innermost begin/end rule
                    end_rule = stack.pop()
                    self.paint(scopes, m.start(), m.end(), [x.get('name') for x in stack] + [end_rule.get('name')])
                    self.captures(scopes, m, end_rule.get('endCaptures') or end_rule.get('captures'))
                elif 'match' in r:
                    self.paint(scopes, m.start(), m.end(), outer + [r.get('name')])
                    self.captures(scopes, m, r.get('captures'))
                else:
                    self.paint(scopes, m.start(), m.end(), outer + [r.get('name')])
                    self.captures(scopes, m, r.get('beginCaptures') or r.get('captures'))
                    stack.append(r)
                pos = m.end() if m.end() > pos else pos + 1
            out.append(scopes[:-1])
        return out


def tm_classes(tm, text):
    out = []
    for scopes in tm.tokenize(text):
        out.append([tm_class(s[-1]) if s else 'none' for s in scopes])
    return out


# ---- vim ----

def vim_classes(path, tmp):
    """Per line, the class of each character as vim highlights it, or an error string."""
    dump = os.path.join(tmp, 'synids.out')
    env = dict(os.environ, STN_RTP=os.path.join(ROOT, 'dsl', 'vim'), STN_OUT=dump)
    cmd = ['vim', '-Es', '-N', '-u', 'NONE', '-i', 'NONE', '--cmd', 'set encoding=utf-8',
           '--cmd', 'exe "set rtp^=" . fnameescape($STN_RTP)', '--cmd', 'filetype plugin on', '--cmd', 'syntax on',
           '-c', 'source ' + os.path.join(ROOT, 'tests', 'editors', 'synids.vim').replace(' ', '\\ '), '-c', 'qa!',
           '--', path]
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        return 'vim did not finish within 60 s'
    if r.returncode != 0 or not os.path.exists(dump):
        return f'vim exited with status {r.returncode}: {(r.stdout + r.stderr).decode(errors="replace")[:300]}'
    with open(dump, encoding='utf-8') as f:
        head, *rows = f.read().split('\n')
    os.remove(dump)
    if head != 'stn stn # %s []':
        return f'vim: filetype, syntax, commentstring, error: expected "stn stn # %s []", got "{head}"'
    unknown = sorted({g for row in rows for g in row.split(' ') if row and g.strip('-') not in VIM_CLASS})
    if unknown:
        return f'{VIM_SYNTAX}: groups unknown to this script (add them to VIM_CLASS): {" ".join(unknown)}'
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    out = []
    for line, row in zip(lines, rows):
        groups = row.split(' ') if row else []
        cls, byte = [], 0
        for ch in line:  # vim reports bytes; a character counts by its first byte
            g = groups[byte] if byte < len(groups) else ''
            cls.append(VIM_CLASS[g.strip('-')])
            byte += len(ch.encode('utf-8'))
        out.append(cls)
    return out


# ---- the comparison ----

def compare(where, text, want, got, lenient_punctuation=False):
    """One line per run of characters highlighted wrongly in the same way."""
    bad = []
    for ln, (line, w, g) in enumerate(zip(text.split('\n'), want, got), 1):
        run = None  # (first column, expected, got)
        for col, (wc, gc) in enumerate(list(zip(w, g)) + [(None, None)], 1):
            wrong = not (wc is None or wc == gc or (lenient_punctuation and wc == 'punctuation' and gc == 'none'))
            if run and (not wrong or (wc, gc) != run[1:]):
                bad.append(f'{where}:{ln}:{run[0]}: {line[run[0] - 1:col - 1]!r} should be {run[1]}, '
                           f'is highlighted as {run[2]}')
                run = None
            if wrong and not run:
                run = (col, wc, gc)
    return bad


def samples(lists, tmp):
    """Two generated programs: every word the grammars must know; every malformed token."""
    words = os.path.join(tmp, 'words.stn')
    with open(words, 'w', encoding='utf-8') as f:
        f.write('# every reserved word, built-in and region word of the compiler\n')
        f.write(' '.join(sorted(lists['keyword'])) + '\n')
        f.write(' '.join(sorted(lists['value'])) + ';\n')
        f.write(' + '.join(f'{w}(1)' for w in sorted(lists['function'])) + ';\n')
        f.write(' + '.join(f'{w} (1)' for w in sorted(lists['function'])) + ';\n')
        for w in sorted(lists['region']):
            f.write(f'{w}: {w} & {w}, {w} > {w} ; f({w}) + {w} * {w} = {w}\n')
        for w in sorted(lists['mark']):
            f.write(f'jacobian u {w} {{ {w}: u = {w} + f({w}); }}\n')
        f.write('param n = 0 + 65 + 007 + 1. + 0.5 + 6.81 + 1.e3 + 2.5e-3 + .5 + .5E2 + 1e-3 + 6E+23 + 2^-1;\n')
        f.write('fields w "a \\"quoted\\" word, a \\\\ and # no comment", q "ünïcödé", e "";  # ünïcödé\n')
        f.write('let c = if a == b or a != b and not a <= b then a >= b else a < b - -a > b;\n')
        f.write('let x1 = u[-1,0] + u[+1, 0] + hx2 + _pi + inf_ + exp_(1) + lap (1);\n')
    bad = os.path.join(tmp, 'bad.stn')
    with open(bad, 'w', encoding='utf-8') as f:
        for t in ['2x', '1..2', '1.5e', '1e3x', '6.8.1', '1e', '$', '@', '!', '%', '|', '~', '?', '`', "'", '\\',
                  '.', 'λ', 'λ1', 'u\x01']:
            f.write(f'let a = b {t} c;\n')
        f.write('fields u "a\\qb", v "\\n";\n')
        f.write('fields v "not closed;\n')
        f.write('fields w "not closed either\\"\n')
    return [words, bad]


def check_tokens(lists, grammar, tmp):
    tm = TextMate(grammar)
    try:
        rules = tm.all_rules()
        for r in rules:
            for key in ('match', 'begin', 'end'):
                if key in r:
                    tm.regex(r[key])
    except (re.error, KeyError) as e:
        fail(f'{TM_GRAMMAR}: a rule does not load: {e}')
        return
    names = {c.get('name') for r in rules for c in [r] + list(r.get('captures', {}).values())
             + list(r.get('beginCaptures', {}).values()) + list(r.get('endCaptures', {}).values()) if c.get('name')}
    unknown = sorted(n for n in names if tm_class(n) is None)
    if unknown:
        fail(f'{TM_GRAMMAR}: scopes unknown to this script (add them to TM_CLASS): {" ".join(unknown)}')
    files = sorted(os.path.join(ROOT, 'examples', f) for f in os.listdir(os.path.join(ROOT, 'examples'))
                   if f.endswith('.stn'))
    files += samples(lists, tmp)
    have_vim = shutil.which('vim') is not None
    tm_bad, vim_bad, n_invalid = [], [], 0
    for path in files:
        with open(path, encoding='utf-8') as f:
            text = f.read()
        name = os.path.relpath(path, ROOT) if path.startswith(ROOT) else os.path.basename(path)
        want = expected_classes(text, lists)
        invalid = sum(c == 'invalid' for row in want for c in row)
        n_invalid += invalid
        if name.startswith('examples/') and invalid:
            fail(f'{name}: the reference tokenizer finds malformed tokens in an example (this script is wrong)')
        tm_bad += compare(name, text, want, tm_classes(tm, text))
        if have_vim:
            got = vim_classes(path, tmp)
            if isinstance(got, str):
                vim_bad.append(f'{name}: {got}')
            else:
                vim_bad += compare(name, text, want, got, lenient_punctuation=True)
    if n_invalid < 20:
        fail('the malformed sample has fewer bad tokens than written (this script is wrong)')
    what = f'{len(files) - 2} examples and 2 samples, character by character'
    if tm_bad:
        fail(f'{TM_GRAMMAR}: highlighting differs from the lexer', *tm_bad)
    else:
        ok(f'{TM_GRAMMAR}: {what}')
    if not have_vim:
        print('editors: note: vim not installed; the vim syntax file was only checked as text')
    elif vim_bad:
        fail(f'{VIM_SYNTAX}: highlighting differs from the lexer', *vim_bad)
    else:
        ok(f'{VIM_SYNTAX}: {what}')


# ---- the VS Code extension's manifest ----

def check_extension(grammar):
    pkg = json.loads(read('dsl/vscode/package.json'))
    conf_path = 'dsl/vscode/language-configuration.json'
    bad = []
    langs = pkg.get('contributes', {}).get('languages', [])
    grammars = pkg.get('contributes', {}).get('grammars', [])
    lang = next((l for l in langs if l.get('id') == 'stn'), None)
    if not lang or '.stn' not in lang.get('extensions', []):
        bad.append('package.json declares no language "stn" for ".stn" files')
    elif os.path.normpath(os.path.join('dsl/vscode', lang.get('configuration', ''))) != conf_path:
        bad.append(f'package.json: the language configuration is not {conf_path}')
    g = next((g for g in grammars if g.get('language') == 'stn'), None)
    if not g or os.path.normpath(os.path.join('dsl/vscode', g.get('path', ''))) != TM_GRAMMAR:
        bad.append(f'package.json: the grammar of "stn" is not {TM_GRAMMAR}')
    elif g.get('scopeName') != grammar.get('scopeName'):
        bad.append(f'package.json says scopeName {g.get("scopeName")}, the grammar {grammar.get("scopeName")}')
    conf = json.loads(read(conf_path))
    if conf.get('comments', {}).get('lineComment') != '#':
        bad.append(f'{conf_path}: the line comment is not "#"')
    if bad:
        fail('dsl/vscode: the extension does not hold together', *bad)
    else:
        ok('dsl/vscode/package.json: language stn (.stn), its configuration and grammar')


# ---- the man page ----

def check_man_page():
    main_c = read('codegen/driver/main.c')
    usage = re.search(r'usage_text\[\]\s*=\s*(.*?);\n', main_c, re.S)
    options = sorted(set(re.findall(r'(?<![\w-])(--?[a-z][a-z-]*)', usage.group(1)))) if usage else []
    sources = ['codegen/emit/emit_c.c'] + sorted(os.path.join('runtime', f) for f in os.listdir(os.path.join(ROOT, 'runtime'))
                                            if f.endswith(('.c', '.h', '.cu')))
    stn = sorted({o for f in sources for o in re.findall(r'\\?"(-stn_[a-z_]+)\\?"', read(f))})
    if len(options) < 5 or len(stn) < 3:
        fail('cannot find the options in codegen/driver/main.c and codegen/emit/emit_c.c (this script is wrong)')
        return
    page = read(MAN_PAGE)
    missing = [o for o in options + stn
               if not re.search(r'(?<![\w\\-])' + re.escape(o.replace('-', '\\-')) + r'(?!\w|\\-)', page)]
    if missing:
        fail(f'{MAN_PAGE} does not document {" ".join(missing)} (written \\-\\-name)')
    else:
        ok(f'{MAN_PAGE}: documents stencilc\'s {len(options)} options and the program\'s {len(stn)} -stn_ options')


def main():
    if sys.version_info < (3, 11):
        fail(f'python {sys.version.split()[0]}: the checks need 3.11 or later (atomic groups)')
        return 1
    try:
        lists = compiler_lists()
        compare_lists(VIM_SYNTAX, vim_lists(), lists)
        grammar = json.loads(read(TM_GRAMMAR))
        compare_lists(TM_GRAMMAR, tm_lists(grammar), lists)
        check_extension(grammar)
        with tempfile.TemporaryDirectory() as tmp:
            check_tokens(lists, grammar, tmp)
        check_man_page()
    except (OSError, ValueError, KeyError) as e:
        fail(f'{type(e).__name__}: {e}')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
