/*
** ast.h: the syntax tree of a .stn program. One node type for everything:
** a kind, a source location, a link to the next node of a list, and a
** union with one payload per kind. The comment on each kind names the
** payload it uses. Nodes come from the parser's arena and are freed with it.
**
** Lists (declarations, arguments, regions, ...) are chained through `next`.
** Names are interned (intern.h): compare them with ==.
*/
#ifndef STN_AST_H
#define STN_AST_H

#include <stdbool.h>
#include <stdio.h>

#include "arena.h"
#include "diag.h"

typedef enum NodeKind {
  /* expressions */
  N_NUM,        /* num: a literal; num.is_int for integer literals */
  N_NAME,       /* name: a field (at offset 0), parameter, let or built-in value */
  N_OFFSET,     /* offset: a field at a neighbour, u[-1,0] */
  N_CALL,       /* call: f(args) */
  N_UNARY,      /* op: op, a */
  N_BINARY,     /* op: op, a, b */
  N_IF,         /* op: a (condition), b (then), c (else) */
  /* declarations */
  N_GRID,       /* grid: axes (list of N_AXIS) */
  N_AXIS,       /* axis: name, points, lo, hi, periodic */
  N_FIELDS,     /* list: items (list of N_FIELD) */
  N_FIELD,      /* field: name, desc */
  N_STENCIL,    /* stencil: shape, width */
  N_PARAM,      /* param: name, type (N_NAME; N_OFFSET for a list, int[2]: the element type's
                   name and the length as its one component; N_CHOICES; or NULL), value (an
                   expression, or N_VALUES for a list), lo, hi, desc */
  N_CHOICES,    /* list: items (list of N_NAME, a parameter's choices in order) */
  N_VALUES,     /* list: items (expressions, a list parameter's default in order) */
  N_LET,        /* let: name, value */
  N_COEF,       /* coef: name, value, source, desc (a coefficient: a value on the grid, not an unknown;
                   value for k = expr, or source, the N_NAME after ':', for k: file) */
  N_DEF,        /* def: name, params (list of N_NAME), body */
  N_PRECEDENCE, /* list: items (list of N_GROUP, highest first) */
  N_GROUP,      /* list: items (list of N_NAME, faces of equal rank) */
  N_MIRROR,     /* mirror: fields (list of N_NAME, NULL for every field), regions (list of N_REGION) */
  N_BLOCK,      /* block: what, field, items (N_LET and N_RULE, in order), mark (N_NAME after
                   a jacobian block's field, `jacobian u approximate {`, or NULL) */
  N_RULE,       /* rule: regions (list of N_REGION), body (expr or list of N_ENTRY) */
  N_REGION,     /* list: items (list of N_NAME, the faces intersected) */
  N_ENTRY,      /* entry: column (N_NAME or N_OFFSET), value */
  N_PROGRAM,    /* list: items (declarations in source order) */
} NodeKind;

typedef enum Op {
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW,
  OP_NEG, OP_PLUS, OP_NOT,
  OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
  OP_AND, OP_OR,
} Op;

typedef enum Shape { SHAPE_STAR, SHAPE_BOX } Shape;

/* The kinds of block; the one enum for them in the compiler. */
typedef enum BlockWhat { BLOCK_RESIDUAL, BLOCK_JACOBIAN, BLOCK_INITIAL } BlockWhat;

typedef struct Node Node;

/* Two places in the source: loc is where diagnostics point (a name, an
   operator, a keyword; its len is what the tildes underline), span the
   construct's whole text, from its first token to its last: a block from
   'residual' to its '}', a declaration from its keyword to its ';', a rule
   from its regions to its ';', a binary expression from its left operand's
   first token to its right operand's last, a call or an offset to its ')'
   or ']'. Parentheses around an expression as a whole are not in its span
   (the grammar drops them) but in the span of what contains them: in
   a * (b + c) the product's span ends at ')', the sum's is "b + c". Where
   the two agree (names, numbers, if) span is loc. */
struct Node {
  NodeKind kind;
  Loc      loc;
  Loc      span;
  int      depth;  /* expression nesting depth (1 for a leaf), for sema's limit */
  Node    *next;
  Node    *last;   /* on the head of a list: its last node, so appending is O(1) */
  /* Filled by sema: for N_NAME, N_OFFSET and N_CALL what the name means
     (decl: the N_FIELD, N_PARAM, N_LET, N_COEF or N_DEF, or the N_NAME of a def's
     argument; builtin: a BuiltinValue or BuiltinFunc, -1 for none); for
     declarations, their position in the model's tables. */
  const Node *decl;
  int         builtin;
  int         index;
  union {
    struct { double value; bool is_int; } num;
    struct { const char *name; } name;
    struct { const char *name; Loc name_loc; int *comp; int ncomp; } offset;
    struct { const char *name; Node *args; int nargs; } call;
    struct { Op op; Node *a, *b, *c; } op;
    struct { Node *axes; } grid;
    struct { const char *name; long long points; Loc points_loc; Node *lo, *hi; bool periodic; } axis;
    struct { const char *name; const char *desc; } field;
    struct { Shape shape; long long width; Loc width_loc; } stencil;
    struct { const char *name; Node *type, *value, *lo, *hi; const char *desc; } param;
    struct { const char *name; Node *value; } let;
    struct { const char *name; Node *value, *source; const char *desc; } coef;
    struct { const char *name; Node *params; int nparams; Node *body; } def;
    struct { Node *items; } list;
    struct { BlockWhat what; const char *field; Loc field_loc; Node *items; Node *mark; } block;
    struct { Node *regions; Node *body; } rule;
    struct { Node *column; Node *value; } entry;
    struct { Node *fields; Node *regions; } mirror;
  };
};

/* Constructors, used by the grammar's actions. */
Node *ast_num(Arena *a, Loc at, double value, bool is_int);
Node *ast_name(Arena *a, Loc at, const char *name);
Node *ast_offset(Arena *a, Loc at, const char *name, Loc name_loc, Node *comps);
Node *ast_call(Arena *a, Loc at, const char *name, Node *args);
Node *ast_unary(Arena *a, Loc at, Op op, Node *x);
Node *ast_binary(Arena *a, Loc at, Op op, Node *x, Node *y);
Node *ast_if(Arena *a, Loc at, Node *cond, Node *then, Node *otherwise);
Node *ast_grid(Arena *a, Loc at, Node *axes);
Node *ast_axis(Arena *a, Loc at, const char *name, Node *points, Node *lo, Node *hi, bool periodic);
Node *ast_list(Arena *a, Loc at, NodeKind kind, Node *items);
Node *ast_field(Arena *a, Loc at, const char *name, const char *desc);
Node *ast_stencil(Arena *a, Loc at, Shape shape, Node *width);
Node *ast_param(Arena *a, Loc at, const char *name, Node *type, Node *value, Node *lo, Node *hi, const char *desc);
Node *ast_let(Arena *a, Loc at, const char *name, Node *value);
Node *ast_coef(Arena *a, Loc at, const char *name, Node *value, const char *desc);
/* coefficient NAME: SOURCE [desc]; (source: the N_NAME of the word, sema checks it is file) */
Node *ast_coef_source(Arena *a, Loc at, const char *name, Node *source, const char *desc);
Node *ast_def(Arena *a, Loc at, const char *name, Node *params, Node *body);
Node *ast_block(Arena *a, Loc at, BlockWhat what, const char *field, Loc field_loc, Node *items);
/* block with its mark (a word after the field: sema checks it is `approximate`); returns block. */
Node *ast_mark(Node *block, Node *mark);
Node *ast_rule(Arena *a, Loc at, Node *regions, Node *body);
Node *ast_entry(Arena *a, Loc at, Node *column, Node *value);
Node *ast_mirror(Arena *a, Loc at, Node *fields, Node *regions);

/* Sets n's span to whole (the grammar's @$); returns n. */
Node *ast_span(Node *n, Loc whole);

/* Appends item to list (either may be NULL); returns the list's head. */
Node *ast_append(Node *list, Node *item);
int   ast_count(const Node *list);

/* The 1-based line of n (of n->loc), for "defined at line 3". */
int   ast_line(const Source *src, const Node *n);
/* The byte offset just past n's construct: n->span.off + n->span.len. */
int   ast_end(const Node *n);
/* The 1-based line of the last byte of n's construct: a block's '}', a declaration's ';'. */
int   ast_end_line(const Source *src, const Node *n);
/* n's construct as the source has it: src->text + n->span.off, n->span.len bytes (*len). */
const char *ast_text(const Source *src, const Node *n, int *len);

const char *ast_op_text(Op op);
/* "residual", "jacobian" or "initial": the block's keyword. */
const char *ast_block_keyword(BlockWhat w);
/* Writes the tree, one node per line with its line:col, for --dump-ast. */
void ast_dump(FILE *out, const Source *src, const Node *program);

#endif
