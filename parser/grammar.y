/*
** grammar.y: the .stn grammar (GNU Bison). Actions only build AST nodes:
** one short constructor call per rule, no checks. Every check lives in the
** semantic pass (codegen/sema/sema.c). The language reference with the same
** grammar in EBNF is dsl/LANGUAGE.md; keep the two in step.
**
** A constructor gets the location diagnostics point at (Node.loc); where
** the rule's whole text (@$) is more than that, ast_span gives the node
** that too (Node.span, ast.h).
**
** Error recovery: a broken declaration or rule is skipped up to its ';' (or
** the '}' of its block) so that one run reports several syntax errors.
*/
%require "3.8"
%define api.pure full
%define api.prefix {stn_}
%define api.location.type {Loc}
%define parse.error custom
%define parse.lac full
%locations
%expect 0
%param {Parser *ps}

%code requires {
#include "ast.h"
#include "parse.h"
}

%code provides {
int stn_lex(STN_STYPE *lval, Loc *lloc, Parser *ps);
}

%code {
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define YYLLOC_DEFAULT(Cur, Rhs, N)                                   \
  do {                                                                \
    if (N) {                                                          \
      (Cur).off = YYRHSLOC(Rhs, 1).off;                               \
      (Cur).len = YYRHSLOC(Rhs, N).off + YYRHSLOC(Rhs, N).len - (Cur).off; \
    } else {                                                          \
      (Cur).off = YYRHSLOC(Rhs, 0).off + YYRHSLOC(Rhs, 0).len;        \
      (Cur).len = 0;                                                  \
    }                                                                 \
  } while (0)

#define A (ps->arena)

static void stn_error(Loc *at, Parser *ps, const char *msg);
static const char *keyword_name(Parser *ps, Loc at);
}

%union {
  Node       *node;
  const char *str;
  double      num;
  int         op;
  bool        flag;
}

%token END 0              "end of file"
%token <str> IDENT        "identifier"
%token <num> INT          "integer"
%token <num> NUMBER       "number"
%token <str> STRING       "string"
%token KW_GRID            "'grid'"
%token KW_POINTS          "'points'"
%token KW_IN              "'in'"
%token KW_PERIODIC        "'periodic'"
%token KW_FIELDS          "'fields'"
%token KW_STENCIL         "'stencil'"
%token KW_STAR            "'star'"
%token KW_BOX             "'box'"
%token KW_WIDTH           "'width'"
%token KW_PARAM           "'param'"
%token KW_LET             "'let'"
%token KW_COEFFICIENT     "'coefficient'"
%token KW_DEF             "'def'"
%token KW_PRECEDENCE      "'precedence'"
%token KW_MIRROR          "'mirror'"
%token KW_RESIDUAL        "'residual'"
%token KW_JACOBIAN        "'jacobian'"
%token KW_INITIAL         "'initial'"
%token KW_IF              "'if'"
%token KW_THEN            "'then'"
%token KW_ELSE            "'else'"
%token KW_AND             "'and'"
%token KW_OR              "'or'"
%token KW_NOT             "'not'"
%token EQ                 "'=='"
%token NE                 "'!='"
%token LE                 "'<='"
%token GE                 "'>='"

%type <node> decls decl grid axes axis fields field_list field stencil param type_opt let coefficient def
%type <node> names precedence mirror groups group block items item jitems jitem regions region
%type <node> entries entry column comps comp int_lit values
%type <node> expr or_expr and_expr not_expr cmp_expr add_expr mul_expr unary pow_expr primary
%type <node> args args_opt
%type <str>  desc_opt word
%type <op>   cmp_op
%type <flag> periodic_opt

%%

program
  : decls                          { ps->program = ast_list(A, @$, N_PROGRAM, $1); }
  ;

decls
  : %empty                         { $$ = NULL; }
  | decls decl                     { $$ = ast_append($1, $2); }
  ;

decl
  : grid | fields | stencil | param | let | coefficient | def | precedence | mirror | block
  | error ';'                      { $$ = NULL; }
  | error '}'                      { $$ = NULL; }
  ;

/* grid { x: 65 points in [0, 1]; y: 65 points in [0, 1] periodic; } */
grid
  : KW_GRID '{' axes '}'           { $$ = ast_span(ast_grid(A, @1, $3), @$); }
  ;

axes
  : axis                           { $$ = ast_append(NULL, $1); }
  | axes axis                      { $$ = ast_append($1, $2); }
  ;

axis
  : IDENT ':' int_lit KW_POINTS KW_IN '[' expr ',' expr ']' periodic_opt ';'
                                   { $$ = ast_span(ast_axis(A, @1, $1, $3, $7, $9, $11), @$); }
  ;

periodic_opt
  : %empty                         { $$ = false; }
  | KW_PERIODIC                    { $$ = true; }
  ;

/* fields u "x velocity", v; */
fields
  : KW_FIELDS field_list ';'       { $$ = ast_span(ast_list(A, @1, N_FIELDS, $2), @$); }
  ;

field_list
  : field                          { $$ = ast_append(NULL, $1); }
  | field_list ',' field           { $$ = ast_append($1, $3); }
  ;

field
  : IDENT desc_opt                 { $$ = ast_span(ast_field(A, @1, $1, $2), @$); }
  ;

desc_opt
  : %empty                         { $$ = NULL; }
  | STRING                         { $$ = $1; }
  ;

/* stencil star width 1; */
stencil
  : KW_STENCIL KW_STAR KW_WIDTH int_lit ';'  { $$ = ast_span(ast_stencil(A, @1, SHAPE_STAR, $4), @$); }
  | KW_STENCIL KW_BOX KW_WIDTH int_lit ';'   { $$ = ast_span(ast_stencil(A, @1, SHAPE_BOX, $4), @$); }
  ;

/* param lambda = 6 in [0, 6.81] "Bratu parameter"; param blocks: int = 2; param m: {a, b} = a; */
param
  : KW_PARAM word type_opt '=' expr desc_opt ';'
                                   { $$ = ast_span(ast_param(A, @2, $2, $3, $5, NULL, NULL, $6), @$); }
  | KW_PARAM word type_opt '=' expr KW_IN '[' expr ',' expr ']' desc_opt ';'
                                   { $$ = ast_span(ast_param(A, @2, $2, $3, $5, $8, $10, $12), @$); }
  | KW_PARAM word type_opt '=' values desc_opt ';'
                                   { $$ = ast_span(ast_param(A, @2, $2, $3, $5, NULL, NULL, $6), @$); }
  | KW_PARAM word type_opt '=' values KW_IN '[' expr ',' expr ']' desc_opt ';'
                                   { $$ = ast_span(ast_param(A, @2, $2, $3, $5, $8, $10, $12), @$); }
  ;

/* [2, 3]: a list parameter's default */
values
  : '[' args ']'                   { $$ = ast_span(ast_list(A, @1, N_VALUES, $2), @$); }
  ;

/* A parameter's or let's name, which an expression reads: an identifier or a keyword
   that never stands inside an expression nor right after one, so the grammar
   stays unambiguous (param initial = 1; the option is -initial). The words of
   expressions (if then else and or not) and 'in' stay reserved. */
word
  : IDENT
  | KW_GRID                        { $$ = keyword_name(ps, @1); }
  | KW_POINTS                      { $$ = keyword_name(ps, @1); }
  | KW_PERIODIC                    { $$ = keyword_name(ps, @1); }
  | KW_FIELDS                      { $$ = keyword_name(ps, @1); }
  | KW_STENCIL                     { $$ = keyword_name(ps, @1); }
  | KW_STAR                        { $$ = keyword_name(ps, @1); }
  | KW_BOX                         { $$ = keyword_name(ps, @1); }
  | KW_WIDTH                       { $$ = keyword_name(ps, @1); }
  | KW_PARAM                       { $$ = keyword_name(ps, @1); }
  | KW_LET                         { $$ = keyword_name(ps, @1); }
  | KW_COEFFICIENT                 { $$ = keyword_name(ps, @1); }
  | KW_DEF                         { $$ = keyword_name(ps, @1); }
  | KW_PRECEDENCE                  { $$ = keyword_name(ps, @1); }
  | KW_MIRROR                      { $$ = keyword_name(ps, @1); }
  | KW_RESIDUAL                    { $$ = keyword_name(ps, @1); }
  | KW_JACOBIAN                    { $$ = keyword_name(ps, @1); }
  | KW_INITIAL                     { $$ = keyword_name(ps, @1); }
  ;

/* : int (a parameter's type: real, int or bool; sema checks the name), : int[2] (a list of
   2 ints; sema checks the length), or : {picard, newton} */
type_opt
  : %empty                         { $$ = NULL; }
  | ':' IDENT                      { $$ = ast_name(A, @2, $2); }
  | ':' IDENT '[' comps ']'        { $$ = ast_offset(A, @$, $2, @2, $4); }
  | ':' '{' names '}'              { $$ = ast_span(ast_list(A, @2, N_CHOICES, $3), @$); }
  ;

/* let hydhx = hy / hx; */
let
  : KW_LET word '=' expr ';'       { $$ = ast_span(ast_let(A, @2, $2, $4), @$); }
  ;

/* coefficient k = 1 + x * y "conductivity";  or  coefficient k: file "conductivity";
   (sema checks the word after ':' is file) */
coefficient
  : KW_COEFFICIENT IDENT '=' expr desc_opt ';'
                                   { $$ = ast_span(ast_coef(A, @2, $2, $4, $5), @$); }
  | KW_COEFFICIENT IDENT ':' IDENT desc_opt ';'
                                   { $$ = ast_span(ast_coef_source(A, @2, $2, ast_name(A, @4, $4), $5), @$); }
  ;

/* def upwind(v, down, here, up) = ...; */
def
  : KW_DEF IDENT '(' names ')' '=' expr ';'  { $$ = ast_span(ast_def(A, @2, $2, $4, $7), @$); }
  | KW_DEF IDENT '(' ')' '=' expr ';'        { $$ = ast_span(ast_def(A, @2, $2, NULL, $6), @$); }
  ;

names
  : IDENT                          { $$ = ast_append(NULL, ast_name(A, @1, $1)); }
  | names ',' IDENT                { $$ = ast_append($1, ast_name(A, @3, $3)); }
  ;

/* precedence left, right > bottom, top; */
precedence
  : KW_PRECEDENCE groups ';'       { $$ = ast_span(ast_list(A, @1, N_PRECEDENCE, $2), @$); }
  ;

groups
  : group                          { $$ = ast_append(NULL, $1); }
  | groups '>' group               { $$ = ast_append($1, $3); }
  ;

group
  : names                          { $$ = ast_list(A, @1, N_GROUP, $1); }
  ;

/* mirror u, v: left, right;   mirror: boundary;  (no fields: every field) */
mirror
  : KW_MIRROR names ':' regions ';'  { $$ = ast_span(ast_mirror(A, @1, $2, $4), @$); }
  | KW_MIRROR ':' regions ';'        { $$ = ast_span(ast_mirror(A, @1, NULL, $3), @$); }
  ;

/* residual u { interior: ...; boundary: u; }  and the same for initial, jacobian;
   jacobian u approximate { ... } (sema checks the word, and that only a jacobian block has one) */
block
  : KW_RESIDUAL IDENT '{' items '}'   { $$ = ast_span(ast_block(A, @1, BLOCK_RESIDUAL, $2, @2, $4), @$); }
  | KW_RESIDUAL IDENT IDENT '{' items '}'
                                   { $$ = ast_span(ast_mark(ast_block(A, @1, BLOCK_RESIDUAL, $2, @2, $5), ast_name(A, @3, $3)), @$); }
  | KW_INITIAL IDENT '{' items '}'    { $$ = ast_span(ast_block(A, @1, BLOCK_INITIAL, $2, @2, $4), @$); }
  | KW_INITIAL IDENT IDENT '{' items '}'
                                   { $$ = ast_span(ast_mark(ast_block(A, @1, BLOCK_INITIAL, $2, @2, $5), ast_name(A, @3, $3)), @$); }
  | KW_JACOBIAN IDENT '{' jitems '}'  { $$ = ast_span(ast_block(A, @1, BLOCK_JACOBIAN, $2, @2, $4), @$); }
  | KW_JACOBIAN IDENT IDENT '{' jitems '}'
                                   { $$ = ast_span(ast_mark(ast_block(A, @1, BLOCK_JACOBIAN, $2, @2, $5), ast_name(A, @3, $3)), @$); }
  ;

items
  : %empty                         { $$ = NULL; }
  | items item                     { $$ = ast_append($1, $2); }
  ;

item
  : let
  | regions ':' expr ';'           { $$ = ast_span(ast_rule(A, @1, $1, $3), @$); }
  | error ';'                      { $$ = NULL; }
  ;

jitems
  : %empty                         { $$ = NULL; }
  | jitems jitem                   { $$ = ast_append($1, $2); }
  ;

jitem
  : let
  | regions ':' entries ';'        { $$ = ast_span(ast_rule(A, @1, $1, $3), @$); }
  | error ';'                      { $$ = NULL; }
  ;

regions
  : region                         { $$ = ast_append(NULL, ast_list(A, @1, N_REGION, $1)); }
  | regions ',' region             { $$ = ast_append($1, ast_list(A, @3, N_REGION, $3)); }
  ;

/* left & bottom: the faces a region lies on */
region
  : IDENT                          { $$ = ast_append(NULL, ast_name(A, @1, $1)); }
  | region '&' IDENT               { $$ = ast_append($1, ast_name(A, @3, $3)); }
  ;

/* u[-1,0] = -hydhx, u = 2*(hydhx + hxdhy) */
entries
  : entry                          { $$ = ast_append(NULL, $1); }
  | entries ',' entry              { $$ = ast_append($1, $3); }
  ;

entry
  : column '=' expr                { $$ = ast_span(ast_entry(A, @1, $1, $3), @$); }
  ;

column
  : IDENT                          { $$ = ast_name(A, @1, $1); }
  | IDENT '[' comps ']'            { $$ = ast_offset(A, @$, $1, @1, $3); }
  ;

comps
  : comp                           { $$ = ast_append(NULL, $1); }
  | comps ',' comp                 { $$ = ast_append($1, $3); }
  ;

comp
  : INT                            { $$ = ast_num(A, @1, $1, true); }
  | '-' INT                        { $$ = ast_num(A, @$, -$2, true); }
  | '+' INT                        { $$ = ast_num(A, @$, $2, true); }
  ;

int_lit
  : INT                            { $$ = ast_num(A, @1, $1, true); }
  ;

/* Expressions, loosest first. */
expr
  : KW_IF expr KW_THEN expr KW_ELSE expr  { $$ = ast_if(A, @$, $2, $4, $6); }
  | or_expr
  ;

or_expr
  : and_expr
  | or_expr KW_OR and_expr         { $$ = ast_span(ast_binary(A, @2, OP_OR, $1, $3), @$); }
  ;

and_expr
  : not_expr
  | and_expr KW_AND not_expr       { $$ = ast_span(ast_binary(A, @2, OP_AND, $1, $3), @$); }
  ;

not_expr
  : cmp_expr
  | KW_NOT not_expr                { $$ = ast_span(ast_unary(A, @1, OP_NOT, $2), @$); }
  ;

/* Comparisons do not chain: a < b < c is a syntax error. */
cmp_expr
  : add_expr
  | add_expr cmp_op add_expr       { $$ = ast_span(ast_binary(A, @2, (Op)$2, $1, $3), @$); }
  ;

cmp_op
  : EQ                             { $$ = OP_EQ; }
  | NE                             { $$ = OP_NE; }
  | '<'                            { $$ = OP_LT; }
  | LE                             { $$ = OP_LE; }
  | '>'                            { $$ = OP_GT; }
  | GE                             { $$ = OP_GE; }
  ;

add_expr
  : mul_expr
  | add_expr '+' mul_expr          { $$ = ast_span(ast_binary(A, @2, OP_ADD, $1, $3), @$); }
  | add_expr '-' mul_expr          { $$ = ast_span(ast_binary(A, @2, OP_SUB, $1, $3), @$); }
  ;

mul_expr
  : unary
  | mul_expr '*' unary             { $$ = ast_span(ast_binary(A, @2, OP_MUL, $1, $3), @$); }
  | mul_expr '/' unary             { $$ = ast_span(ast_binary(A, @2, OP_DIV, $1, $3), @$); }
  ;

/* -x^2 is -(x^2); 2^-1 is 2^(-1); 2^3^2 is 2^(3^2). */
unary
  : pow_expr
  | '-' unary                      { $$ = ast_span(ast_unary(A, @1, OP_NEG, $2), @$); }
  | '+' unary                      { $$ = ast_span(ast_unary(A, @1, OP_PLUS, $2), @$); }
  ;

pow_expr
  : primary
  | primary '^' unary              { $$ = ast_span(ast_binary(A, @2, OP_POW, $1, $3), @$); }
  ;

primary
  : INT                            { $$ = ast_num(A, @1, $1, true); }
  | NUMBER                         { $$ = ast_num(A, @1, $1, false); }
  | word                           { $$ = ast_name(A, @1, $1); }
  | word '[' comps ']'             { $$ = ast_offset(A, @$, $1, @1, $3); }
  | word '(' args_opt ')'          { $$ = ast_span(ast_call(A, @1, $1, $3), @$); }
  | '(' expr ')'                   { $$ = $2; }  /* the parentheses are in the span of what contains it */
  ;

args_opt
  : %empty                         { $$ = NULL; }
  | args
  ;

args
  : expr                           { $$ = ast_append(NULL, $1); }
  | args ',' expr                  { $$ = ast_append($1, $3); }
  ;

%%

/* ------------------------------------------------------------ errors */

/* The token's text, for "unexpected identifier 'lamda'". */
static void token_text(Parser *ps, Loc at, char *buf, size_t size) {
  int n = at.len < 40 ? at.len : 40;
  snprintf(buf, size, "%.*s%s", n, ps->src->text + at.off, at.len > 40 ? "..." : "");
}

/* The keywords of the rule 'word': the ones that may name a parameter. */
static bool names_a_parameter(yysymbol_kind_t k) {
  switch (k) {
  case YYSYMBOL_KW_GRID: case YYSYMBOL_KW_POINTS: case YYSYMBOL_KW_PERIODIC: case YYSYMBOL_KW_FIELDS:
  case YYSYMBOL_KW_STENCIL: case YYSYMBOL_KW_STAR: case YYSYMBOL_KW_BOX: case YYSYMBOL_KW_WIDTH:
  case YYSYMBOL_KW_PARAM: case YYSYMBOL_KW_LET: case YYSYMBOL_KW_COEFFICIENT: case YYSYMBOL_KW_DEF:
  case YYSYMBOL_KW_PRECEDENCE:
  case YYSYMBOL_KW_MIRROR: case YYSYMBOL_KW_RESIDUAL: case YYSYMBOL_KW_JACOBIAN: case YYSYMBOL_KW_INITIAL:
    return true;
  default:
    return false;
  }
}

/* 1 when the token before the lookahead is 'param', 2 when it is 'let' (a 'word' comes next), else 0. */
static int after_param(const Parser *ps) {
  const char *t = ps->src->text + ps->prev.off;
  if (ps->prev.len == 5 && strncmp(t, "param", 5) == 0) return 1;
  return ps->prev.len == 3 && strncmp(t, "let", 3) == 0 ? 2 : 0;
}

/* Whether the token before the lookahead is the word file (coefficient k: file). */
static bool after_file(const Parser *ps) { return ps->prev.len == 4 && strncmp(ps->src->text + ps->prev.off, "file", 4) == 0; }

static const char *closer_of(char open) { return open == '(' ? "')'" : open == '[' ? "']'" : "'}'"; }

/* Bison calls this with the parser's state at a syntax error: what came, and
   what would have been accepted. We say both, point at the place, and add the
   hint that helps most: the bracket left open, '==' for '=', a missing ';'. */
static int yyreport_syntax_error(const yypcontext_t *ctx, Parser *ps) {
  enum { MAX_EXPECTED = 128, MAX_LISTED = 6 };
  yysymbol_kind_t expected[MAX_EXPECTED];
  int nexp = yypcontext_expected_tokens(ctx, expected, MAX_EXPECTED);
  /* Where a parameter's name may stand (the rule 'word': 'points' is expected
     with an identifier nowhere else), its keywords are forms of "identifier",
     not tokens to list. */
  bool ident_here = false, points_here = false;
  for (int i = 0; i < nexp; i++) {
    ident_here |= expected[i] == YYSYMBOL_IDENT;
    points_here |= expected[i] == YYSYMBOL_KW_POINTS;
  }
  if (ident_here && points_here) {
    int kept = 0;
    for (int i = 0; i < nexp; i++)
      if (!names_a_parameter(expected[i])) expected[kept++] = expected[i];
    nexp = kept;
  }
  yysymbol_kind_t got = yypcontext_token(ctx);
  Loc at = *yypcontext_location(ctx);
  if (ps->placeholder.len > 0 && (ps->placeholder.off == at.off || ps->placeholder.off == ps->prev.off))
    return 0;  /* follows from an error the lexer reported */

  char what[96];
  if (got == YYSYMBOL_YYEOF)
    snprintf(what, sizeof what, "end of file");
  else if (got == YYSYMBOL_IDENT || got == YYSYMBOL_INT || got == YYSYMBOL_NUMBER) {
    char text[64];
    token_text(ps, at, text, sizeof text);
    snprintf(what, sizeof what, "%s '%s'", yysymbol_name(got), text);
  } else
    snprintf(what, sizeof what, "%s", yysymbol_name(got));

  /* The expected tokens are listed only when there are few enough to help. */
  /* All expected tokens when they are few; otherwise the ones that end or
     separate a construct (then, else, ';', ')', ...), which say what is missing. */
  static const char *const enders[] = {"'then'", "'else'", "';'", "','", "':'", "')'", "']'", "'}'", "'='"};
  const char *listed[MAX_LISTED];
  int nlisted = 0;
  bool wants_semi = false, wants_eq = false, wants_ident = false, wants_decl = false, operators = false;
  for (int i = 0; i < nexp; i++) {
    const char *name = yysymbol_name(expected[i]);
    if (strcmp(name, "';'") == 0) wants_semi = true;
    if (expected[i] == YYSYMBOL_EQ) wants_eq = true;
    if (expected[i] == YYSYMBOL_IDENT) wants_ident = true;
    if (expected[i] == YYSYMBOL_KW_GRID) wants_decl = true;  /* left only at a declaration's start */
    if (strcmp(name, "'+'") == 0) operators = true;
  }
  for (int i = 0; i < nexp && nlisted < MAX_LISTED; i++) {
    const char *name = yysymbol_name(expected[i]);
    bool ender = false;
    for (int k = 0; k < (int)(sizeof enders / sizeof enders[0]); k++) ender |= strcmp(name, enders[k]) == 0;
    if (nexp <= MAX_LISTED || ender) listed[nlisted++] = name;
  }
  char expect[256] = "";
  size_t len = 0;
  for (int i = 0; i < nlisted; i++) {
    const char *sep = i == 0 ? ", expecting " : i == nlisted - 1 ? " or " : ", ";
    len += (size_t)snprintf(expect + len, sizeof expect - len, "%s%s", sep, listed[i]);
  }
  if (nlisted && nexp > MAX_LISTED && operators) snprintf(expect + len, sizeof expect - len, " or an operator");
  bool got_keyword = strncmp(yysymbol_name(got), "'", 1) == 0 && isalpha((unsigned char)yysymbol_name(got)[1]);
  const char *got_name = yysymbol_name(got);
  bool got_compare = got == YYSYMBOL_EQ || got == YYSYMBOL_NE || got == YYSYMBOL_LE || got == YYSYMBOL_GE ||
                     strcmp(got_name, "'<'") == 0 || strcmp(got_name, "'>'") == 0;

  /* A ';' missing at the end of a line: point at the end of that line, not at the next token. */
  int prev_line, prev_col, at_line, at_col;
  diag_line_col(ps->src, ps->prev.off + ps->prev.len, &prev_line, &prev_col);
  diag_line_col(ps->src, at.off, &at_line, &at_col);
  if (wants_semi && ps->prev.len > 0 && prev_line < at_line) {
    Loc end = {ps->prev.off + ps->prev.len, 1};
    diag_error(ps->diag, end, "expected ';' at the end of this line, before %s", what);
    return 0;
  }

  diag_error(ps->diag, at, "unexpected %s%s", what, expect);
  if (strcmp(got_name, "'='") == 0 && wants_eq)
    diag_hint(ps->diag, "to compare two values write '=='; '=' only gives a name or an entry its value");
  else if (strcmp(got_name, "'='") == 0 && after_file(ps))
    diag_hint(ps->diag, "a coefficient read from a file has no expression: write 'coefficient NAME: file;' (the "
                        "program reads its values from the file -NAME_file names) or 'coefficient NAME = expr;'");
  else if (got_keyword && wants_ident && after_param(ps)) {
    int n = (int)strlen(got_name) - 2;
    diag_hint(ps->diag, "a parameter or let may be named like a declaration's keyword ('initial', 'width', ...), "
                        "but not like a word of expressions, which would read it (if, then, else, and, or, not, in); "
                        "rename it, e.g. '%.*s_value'%s%.*s%s", n, got_name + 1, after_param(ps) == 1 ? " (option -" : "",
              after_param(ps) == 1 ? n : 0, got_name + 1, after_param(ps) == 1 ? "_value)" : "");
  }
  else if (got_keyword && wants_ident)
    diag_hint(ps->diag, "%s is a reserved word of the language; choose another name", got_name);
  else if (wants_decl && !wants_semi)
    diag_hint(ps->diag, "a declaration starts with grid, fields, stencil, param, let, coefficient, def, precedence, "
                        "mirror, residual, jacobian or initial");
  else if (got_compare)
    diag_hint(ps->diag, "comparisons do not chain: write 'a < b and b < c'");
  else if (ps->nopen > 0) {
    Bracket b = ps->open[ps->nopen - 1];
    const char *closer = closer_of(b.ch);
    for (int i = 0; i < nexp; i++) {
      if (strcmp(yysymbol_name(expected[i]), closer) == 0) {
        int line, col;
        diag_line_col(ps->src, b.at.off, &line, &col);
        diag_hint(ps->diag, "expected %s to close '%c' at %d:%d", closer, b.ch, line, col);
        break;
      }
    }
  }
  return 0;
}

/* A keyword standing for a parameter's name: its text, interned like an identifier's. */
static const char *keyword_name(Parser *ps, Loc at) { return intern(ps->names, ps->src->text + at.off, (size_t)at.len); }

/* Bison's only other message is "memory exhausted": its stack is full,
   which a .stn program reaches only through absurd nesting. */
static void stn_error(Loc *at, Parser *ps, const char *msg) {
  if (strcmp(msg, "memory exhausted") == 0) {
    diag_error(ps->diag, *at, "brackets or operators nested too deeply (parser stack of %d levels is full)",
               YYMAXDEPTH);
    diag_hint(ps->diag, "split the expression into named parts with 'let'");
  } else
    diag_error(ps->diag, *at, "%s", msg);
}

Node *parse_program(const Source *src, Diag *d, Arena *arena, Intern *names) {
  Parser ps = {0};
  ps.src = src;
  ps.diag = d;
  ps.arena = arena;
  ps.names = names;
  ps.cur = src->text;
  stn_parse(&ps);
  free(ps.open);
  return ps.program;
}
