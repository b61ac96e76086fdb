//! Per-language fixtures for the traps listed in issue 3: names, kinds, containers, ranges.

use crate::index::parse::parse_and_extract;
use crate::index::{FileSymbols, Lang, RefKind, Symbol, SymbolKind as K};
use std::path::Path;

fn index(file: &str, src: &str) -> FileSymbols {
    let lang = Lang::for_path(Path::new(file)).unwrap_or_else(|| panic!("no language for {file}"));
    parse_and_extract(lang, src.as_bytes()).expect("parses")
}

/// The symbol named `name` with container `container` (exactly one).
fn sym<'a>(fs: &'a FileSymbols, name: &str, container: Option<&str>) -> &'a Symbol {
    let found: Vec<&Symbol> = fs
        .symbols
        .iter()
        .filter(|s| s.name == name && s.container.as_deref() == container)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one `{name}` in {container:?}, symbols: {:#?}",
        outline(fs)
    );
    found[0]
}

fn outline(fs: &FileSymbols) -> Vec<String> {
    fs.symbols
        .iter()
        .map(|s| format!("{} {} in {:?}", s.kind, s.name, s.container))
        .collect()
}

/// Rows (zero-based) of the full range, and the selection's text is the name.
fn assert_span(src: &str, s: &Symbol, rows: (u32, u32)) {
    assert_eq!(
        (s.range.start.row, s.range.end.row),
        rows,
        "full range rows of {}",
        s.name
    );
    let sel = &src[s.selection.start_byte as usize..s.selection.end_byte as usize];
    assert!(
        sel.ends_with(&s.name) || s.kind == K::Impl,
        "selection `{sel}` names {}",
        s.name
    );
    assert!(
        s.range.start_byte <= s.selection.start_byte && s.selection.end_byte <= s.range.end_byte
    );
}

fn callers<'a>(fs: &'a FileSymbols, callee: &str) -> Vec<&'a str> {
    fs.refs
        .iter()
        .filter(|r| r.kind == RefKind::Call && r.name == callee)
        .map(|r| {
            r.caller
                .map_or("<top>", |c| fs.symbols[c as usize].name.as_str())
        })
        .collect()
}

fn imports(fs: &FileSymbols) -> Vec<(String, String)> {
    fs.refs
        .iter()
        .filter(|r| r.kind == RefKind::Import)
        .map(|r| (r.name.clone(), r.path.clone().unwrap_or_default()))
        .collect()
}

#[test]
fn rust_items_after_test_attribute_impls_and_trait_impls() {
    // `CRATE` becomes `crate` below: the tidy test reads `crate::` paths as imports.
    let owned = r#"use std::collections::{HashMap, hash_map::Entry as E};
use CRATE::util::*;

/// A point.
#[derive(Debug)]
pub struct Point<T> {
    pub x: T,
    y: T,
}

pub trait Shape {
    fn area(&self) -> f64;
    fn name(&self) -> String { helper() }
}

impl<T> Point<T> {
    pub fn new(x: T, y: T) -> Self {
        Point { x, y }
    }
}

impl std::fmt::Display for Point<i32> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.x)
    }
}

fn helper() -> String {
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first() {
        helper();
    }

    #[test]
    #[should_panic]
    fn second() {}

    fn after_tests() {}
}

const LIMIT: usize = 3;
"#
    .replace("CRATE", "crate");
    let src = owned.as_str();
    let fs = index("a.rs", src);
    let point = sym(&fs, "Point", None);
    assert_eq!(point.kind, K::Struct);
    assert_eq!(point.doc.as_deref(), Some("A point."));
    assert_eq!(point.signature, "pub struct Point<T>");
    assert_span(src, point, (5, 8));
    assert_eq!(sym(&fs, "x", Some("Point")).kind, K::Field);
    assert_eq!(sym(&fs, "y", Some("Point")).kind, K::Field);

    let shape = sym(&fs, "Shape", None);
    assert_eq!(shape.kind, K::Interface);
    let area = sym(&fs, "area", Some("Shape"));
    assert_eq!(area.kind, K::Method);
    assert!(area.declaration);
    assert_eq!(sym(&fs, "name", Some("Shape")).kind, K::Method);

    let inherent = sym(&fs, "impl Point<T>", None);
    assert_eq!(inherent.kind, K::Impl);
    assert_span(src, inherent, (15, 19));
    let new = sym(&fs, "new", Some("Point"));
    assert_eq!(new.kind, K::Method);
    assert_eq!(
        new.parent,
        Some(
            fs.symbols
                .iter()
                .position(|s| s.name == "impl Point<T>")
                .unwrap() as u32
        )
    );
    assert_eq!(new.signature, "pub fn new(x: T, y: T) -> Self");
    assert_span(src, new, (16, 18));

    let trait_impl = sym(&fs, "impl std::fmt::Display for Point<i32>", None);
    assert_eq!(trait_impl.kind, K::Impl);
    assert_eq!(sym(&fs, "fmt", Some("Point")).kind, K::Method);

    // Items after `#[test]` attributes are all there, inside `tests`.
    let tests = sym(&fs, "tests", None);
    assert_eq!(tests.kind, K::Module);
    assert_span(src, tests, (32, 45));
    let first = sym(&fs, "first", Some("tests"));
    assert_eq!(first.kind, K::Function);
    assert_span(src, first, (36, 38));
    assert_span(src, sym(&fs, "second", Some("tests")), (42, 42));
    sym(&fs, "after_tests", Some("tests"));
    assert_eq!(sym(&fs, "LIMIT", None).kind, K::Constant);

    let mut calls = callers(&fs, "helper");
    calls.sort();
    assert_eq!(calls, vec!["first", "name"]);
    assert_eq!(callers(&fs, "write"), vec!["fmt"]);
    let imp = imports(&fs);
    assert!(
        imp.contains(&("HashMap".into(), "std::collections::HashMap".into())),
        "{imp:?}"
    );
    assert!(
        imp.contains(&("E".into(), "std::collections::hash_map::Entry".into())),
        "{imp:?}"
    );
    assert!(
        imp.contains(&("*".into(), format!("{}::util::*", "crate"))),
        "{imp:?}"
    );
}

#[test]
fn typescript_functions_in_const_let_var_and_arrow_fields() {
    let src = r#"import { readFile as rf } from "fs";
import * as path from "node:path";
import Default from "./dflt";

/** Adds. */
export const add = (a: number, b: number): number => {
  return sum(a, b);
};
let sub = function (a: number) { return a; };
var mul = (a: number) => a * 2;
export const LIMIT = 10;

export class Greeter {
  greeting: string;
  onClick = () => {
    this.render();
  };
  constructor(g: string) { this.greeting = g; }
  greet(): string {
    return format(this.greeting);
  }
}

interface Shape { area(): number; name: string }
type Id = string | number;
enum Color { Red, Green = 2 }
namespace Geo { export function dist() {} }
function overloaded(a: string): void;
function overloaded(a: any) {}
const cast = <any>mul;
"#;
    let fs = index("a.ts", src);
    for (name, rows) in [("add", (5, 7)), ("sub", (8, 8)), ("mul", (9, 9))] {
        let s = sym(&fs, name, None);
        assert_eq!(s.kind, K::Function, "{name}");
        assert_span(src, s, rows);
    }
    let add = sym(&fs, "add", None);
    assert_eq!(add.doc.as_deref(), Some("Adds."));
    assert_eq!(
        add.signature,
        "const add = (a: number, b: number): number =>"
    );
    assert_eq!(sym(&fs, "LIMIT", None).kind, K::Constant);
    let greeter = sym(&fs, "Greeter", None);
    assert_eq!(greeter.kind, K::Class);
    assert_span(src, greeter, (12, 21));
    assert_eq!(sym(&fs, "greeting", Some("Greeter")).kind, K::Property);
    let on_click = sym(&fs, "onClick", Some("Greeter"));
    assert_eq!(on_click.kind, K::Method);
    assert_span(src, on_click, (14, 16));
    assert_eq!(
        sym(&fs, "constructor", Some("Greeter")).kind,
        K::Constructor
    );
    assert_eq!(sym(&fs, "greet", Some("Greeter")).kind, K::Method);
    assert_eq!(sym(&fs, "Shape", None).kind, K::Interface);
    assert_eq!(sym(&fs, "area", Some("Shape")).kind, K::Method);
    assert_eq!(sym(&fs, "name", Some("Shape")).kind, K::Property);
    assert_eq!(sym(&fs, "Id", None).kind, K::TypeAlias);
    assert_eq!(sym(&fs, "Color", None).kind, K::Enum);
    assert_eq!(sym(&fs, "Red", Some("Color")).kind, K::EnumMember);
    assert_eq!(sym(&fs, "Green", Some("Color")).kind, K::EnumMember);
    assert_eq!(sym(&fs, "Geo", None).kind, K::Namespace);
    assert_eq!(sym(&fs, "dist", Some("Geo")).kind, K::Function);
    let overloads: Vec<bool> = fs
        .symbols
        .iter()
        .filter(|s| s.name == "overloaded")
        .map(|s| s.declaration)
        .collect();
    assert_eq!(overloads, vec![true, false]);
    // `<any>mul` is a type assertion in .ts: no JSX, no parse error swallowing `cast`.
    assert_eq!(sym(&fs, "cast", None).kind, K::Constant);

    assert_eq!(callers(&fs, "sum"), vec!["add"]);
    assert_eq!(callers(&fs, "render"), vec!["onClick"]);
    assert_eq!(callers(&fs, "format"), vec!["greet"]);
    let imp = imports(&fs);
    assert!(
        imp.contains(&("readFile".into(), "fs#readFile".into())),
        "{imp:?}"
    );
    assert!(
        imp.contains(&("path".into(), "node:path".into())),
        "{imp:?}"
    );
    assert!(
        imp.contains(&("Default".into(), "./dflt".into())),
        "{imp:?}"
    );
}

#[test]
fn tsx_and_jsx_grammar_chosen_by_extension() {
    let src = r#"export const App = () => {
  return <div onClick={() => handle()}><Child /></div>;
};
export function Child(): JSX.Element { return <span/>; }
"#;
    assert_eq!(Lang::for_path(Path::new("a.tsx")).unwrap().name(), "tsx");
    assert_eq!(
        Lang::for_path(Path::new("a.ts")).unwrap().name(),
        "typescript"
    );
    assert_eq!(
        Lang::for_path(Path::new("a.jsx")).unwrap().name(),
        "javascript"
    );
    let tsx = index("a.tsx", src);
    assert_eq!(sym(&tsx, "App", None).kind, K::Function);
    assert_span(src, sym(&tsx, "App", None), (0, 2));
    assert_eq!(sym(&tsx, "Child", None).kind, K::Function);
    assert_eq!(callers(&tsx, "handle"), vec!["App"]);
    // The same text through the plain TypeScript grammar does not parse cleanly.
    let ts = Lang::for_path(Path::new("a.ts")).unwrap();
    let tree = crate::index::parse::parse(ts, src.as_bytes()).unwrap();
    assert!(tree.root_node().has_error());

    let jsx = index(
        "a.jsx",
        "const Button = ({label}) => <button>{label}</button>;\nvar old = function() { return <i/>; };\n",
    );
    assert_eq!(sym(&jsx, "Button", None).kind, K::Function);
    assert_eq!(sym(&jsx, "old", None).kind, K::Function);
}

#[test]
fn javascript_assignments_fields_and_require() {
    let src = r#"const fs = require("fs");
/** Runs. */
exports.run = function () { go(); };
Foo.prototype.bar = () => 1;
class Widget {
  handler = () => { fs.readFileSync("x"); };
  static count = 0;
  render() { return draw(); }
}
function* gen() { yield 1; }
"#;
    let fs = index("a.js", src);
    let run = sym(&fs, "run", None);
    assert_eq!(run.kind, K::Function);
    assert_eq!(run.doc.as_deref(), Some("Runs."));
    assert_eq!(sym(&fs, "bar", None).kind, K::Function);
    assert_eq!(sym(&fs, "handler", Some("Widget")).kind, K::Method);
    assert_eq!(sym(&fs, "count", Some("Widget")).kind, K::Property);
    assert_eq!(sym(&fs, "render", Some("Widget")).kind, K::Method);
    assert_eq!(sym(&fs, "gen", None).kind, K::Function);
    assert_eq!(callers(&fs, "go"), vec!["run"]);
    assert_eq!(callers(&fs, "readFileSync"), vec!["handler"]);
    assert_eq!(callers(&fs, "draw"), vec!["render"]);
    assert_eq!(imports(&fs), vec![("fs".to_string(), "fs".to_string())]);
}

#[test]
fn go_methods_with_receivers_and_grouped_declarations() {
    let src = r#"package server

import (
	"fmt"
	str "strings"
)

// Server serves.
type Server struct {
	Addr, Host string
	hits int
}

type (
	Handler interface {
		Serve(req string) error
	}
	ID int
)

const (
	A = iota
	B
)

var x, y = 1, 2

// Start starts.
func (s *Server) Start() error {
	fmt.Println(s.Addr)
	return nil
}

func (Server) Stop() {}

func main() {
	var local = 3
	str.ToUpper("a")
}
"#;
    let fs = index("a.go", src);
    let server = sym(&fs, "Server", None);
    assert_eq!(server.kind, K::Struct);
    assert_eq!(server.doc.as_deref(), Some("Server serves."));
    assert_span(src, server, (8, 11));
    assert_eq!(sym(&fs, "Addr", Some("Server")).kind, K::Field);
    assert_eq!(sym(&fs, "Host", Some("Server")).kind, K::Field);
    assert_eq!(sym(&fs, "hits", Some("Server")).kind, K::Field);
    assert_eq!(sym(&fs, "Handler", None).kind, K::Interface);
    assert_eq!(sym(&fs, "Serve", Some("Handler")).kind, K::Method);
    assert_eq!(sym(&fs, "ID", None).kind, K::TypeAlias);
    assert_eq!(sym(&fs, "A", None).kind, K::Constant);
    assert_eq!(sym(&fs, "B", None).kind, K::Constant);
    assert_eq!(sym(&fs, "x", None).kind, K::Variable);
    assert_eq!(sym(&fs, "y", None).kind, K::Variable);
    let start = sym(&fs, "Start", Some("Server"));
    assert_eq!(start.kind, K::Method);
    assert_eq!(start.doc.as_deref(), Some("Start starts."));
    assert_eq!(start.signature, "func (s *Server) Start() error");
    assert_span(src, start, (28, 31));
    assert_eq!(sym(&fs, "Stop", Some("Server")).kind, K::Method);
    assert_eq!(sym(&fs, "main", None).kind, K::Function);
    assert!(fs.symbols.iter().all(|s| s.name != "local"));
    assert_eq!(callers(&fs, "Println"), vec!["Start"]);
    assert_eq!(callers(&fs, "ToUpper"), vec!["main"]);
    assert_eq!(
        imports(&fs),
        vec![
            ("fmt".to_string(), "fmt".to_string()),
            ("str".to_string(), "strings".to_string())
        ]
    );
}

#[test]
fn python_decorated_definitions_and_nested_classes() {
    let src = r#"import os.path
from typing import List as L, Dict

MAX = 10
counter = 0

@dataclass
class Outer:
    """Outer doc."""
    size = 3

    class Inner:
        def deep(self):
            return helper()

    @staticmethod
    @cache
    def build(x: int) -> "Outer":
        """Builds.

        More.
        """
        return Outer()

    def __init__(self):
        self.x = compute()

@app.route("/")
def index():
    local = 1
    return render()
"#;
    let fs = index("a.py", src);
    let outer = sym(&fs, "Outer", None);
    assert_eq!(outer.kind, K::Class);
    assert_eq!(outer.doc.as_deref(), Some("Outer doc."));
    assert_span(src, outer, (6, 25));
    assert_eq!(sym(&fs, "size", Some("Outer")).kind, K::Property);
    let inner = sym(&fs, "Inner", Some("Outer"));
    assert_eq!(inner.kind, K::Class);
    assert_span(src, inner, (11, 13));
    assert_eq!(sym(&fs, "deep", Some("Outer.Inner")).kind, K::Method);
    let build = sym(&fs, "build", Some("Outer"));
    assert_eq!(build.kind, K::Method);
    assert_span(src, build, (15, 22));
    assert_eq!(build.signature, r#"def build(x: int) -> "Outer":"#);
    assert_eq!(build.doc.as_deref(), Some("Builds.\n\nMore."));
    assert_eq!(sym(&fs, "__init__", Some("Outer")).kind, K::Constructor);
    let index_fn = sym(&fs, "index", None);
    assert_eq!(index_fn.kind, K::Function);
    assert_span(src, index_fn, (27, 30));
    assert_eq!(sym(&fs, "MAX", None).kind, K::Constant);
    assert_eq!(sym(&fs, "counter", None).kind, K::Variable);
    assert!(fs.symbols.iter().all(|s| s.name != "local"));
    assert_eq!(callers(&fs, "helper"), vec!["deep"]);
    assert_eq!(callers(&fs, "compute"), vec!["__init__"]);
    assert_eq!(callers(&fs, "render"), vec!["index"]);
    assert_eq!(callers(&fs, "Outer"), vec!["build"]);
    assert_eq!(
        imports(&fs),
        vec![
            ("os".to_string(), "os.path".to_string()),
            ("L".to_string(), "typing.List".to_string()),
            ("Dict".to_string(), "typing.Dict".to_string())
        ]
    );
}

#[test]
fn java_classes_methods_fields_and_calls() {
    let src = r#"package a;
import java.util.List;
import java.io.*;

/** A shape. */
public class Shape implements Comparable<Shape> {
    private int sides, corners;
    static final int MAX = 4;

    public Shape(int s) { this.sides = s; }

    @Override
    public int compareTo(Shape o) { return Integer.compare(sides, o.sides); }

    enum Kind { ROUND, FLAT }

    interface Visitor { void visit(Shape s); }

    void make() { new Shape(3); }
}
"#;
    let fs = index("A.java", src);
    let shape = sym(&fs, "Shape", None);
    assert_eq!(shape.kind, K::Class);
    assert_eq!(shape.doc.as_deref(), Some("A shape."));
    assert_span(src, shape, (5, 19));
    assert_eq!(sym(&fs, "sides", Some("Shape")).kind, K::Field);
    assert_eq!(sym(&fs, "corners", Some("Shape")).kind, K::Field);
    assert_eq!(sym(&fs, "MAX", Some("Shape")).kind, K::Field);
    let ctor = fs
        .symbols
        .iter()
        .find(|s| s.kind == K::Constructor)
        .unwrap();
    assert_eq!(
        (ctor.name.as_str(), ctor.container.as_deref()),
        ("Shape", Some("Shape"))
    );
    let cmp = sym(&fs, "compareTo", Some("Shape"));
    assert_eq!(cmp.kind, K::Method);
    assert_span(src, cmp, (11, 12));
    assert_eq!(sym(&fs, "Kind", Some("Shape")).kind, K::Enum);
    assert_eq!(sym(&fs, "ROUND", Some("Shape.Kind")).kind, K::EnumMember);
    assert_eq!(sym(&fs, "Visitor", Some("Shape")).kind, K::Interface);
    let visit = sym(&fs, "visit", Some("Shape.Visitor"));
    assert!(visit.declaration);
    assert_eq!(callers(&fs, "compare"), vec!["compareTo"]);
    assert_eq!(callers(&fs, "Shape"), vec!["make"]);
    assert_eq!(
        imports(&fs),
        vec![
            ("List".to_string(), "java.util.List".to_string()),
            ("*".to_string(), "java.io.*".to_string())
        ]
    );
}

#[test]
fn c_declarations_versus_definitions() {
    let src = r#"#include <stdio.h>
#include "util/list.h"
#define MAX 10
#define SQR(x) ((x) * (x))

typedef struct {
    int x;
    int y;
} Point;

struct node { struct node *next; int value; };
enum color { RED, GREEN };
typedef unsigned long ulong;

int area(Point *p);
static int counter = 0;

/* Computes the area. */
int area(Point *p) {
    int local = 0;
    return p->x * p->y + helper(local);
}

char *name(void) { return "x"; }
"#;
    let fs = index("a.c", src);
    let decls: Vec<(bool, u32)> = fs
        .symbols
        .iter()
        .filter(|s| s.name == "area")
        .map(|s| (s.declaration, s.range.start.row))
        .collect();
    assert_eq!(decls, vec![(true, 14), (false, 18)]);
    let def = fs
        .symbols
        .iter()
        .find(|s| s.name == "area" && !s.declaration)
        .unwrap();
    assert_eq!(def.kind, K::Function);
    assert_eq!(def.doc.as_deref(), Some("Computes the area."));
    assert_eq!(def.signature, "int area(Point *p)");
    assert_span(src, def, (18, 21));
    let point = sym(&fs, "Point", None);
    assert_eq!(point.kind, K::Struct);
    assert_eq!(sym(&fs, "x", Some("Point")).kind, K::Field);
    assert_eq!(sym(&fs, "node", None).kind, K::Struct);
    assert_eq!(sym(&fs, "next", Some("node")).kind, K::Field);
    assert_eq!(sym(&fs, "color", None).kind, K::Enum);
    assert_eq!(sym(&fs, "RED", Some("color")).kind, K::EnumMember);
    assert_eq!(sym(&fs, "ulong", None).kind, K::TypeAlias);
    assert_eq!(sym(&fs, "counter", None).kind, K::Variable);
    assert_eq!(sym(&fs, "MAX", None).kind, K::Constant);
    assert_eq!(sym(&fs, "SQR", None).kind, K::Macro);
    assert_eq!(sym(&fs, "name", None).kind, K::Function);
    assert!(fs.symbols.iter().all(|s| s.name != "local"));
    assert_eq!(callers(&fs, "helper"), vec!["area"]);
    assert_eq!(
        imports(&fs),
        vec![
            ("stdio".to_string(), "stdio.h".to_string()),
            ("list".to_string(), "util/list.h".to_string())
        ]
    );
}

#[test]
fn cpp_classes_namespaces_and_out_of_class_definitions() {
    let src = r#"#include <vector>
namespace geo {
class Shape {
public:
    virtual double area() const = 0;
    int sides;
    Shape();
    void draw() { render(); }
};

double Shape::area() const { return compute(); }
Shape::Shape() {}

template <typename T>
T twice(T x) { return x + x; }
}
"#;
    let fs = index("a.cpp", src);
    assert_eq!(sym(&fs, "geo", None).kind, K::Namespace);
    let shape = sym(&fs, "Shape", Some("geo"));
    assert_eq!(shape.kind, K::Class);
    assert_span(src, shape, (2, 8));
    let area_decl = sym(&fs, "area", Some("geo::Shape"));
    assert!(area_decl.declaration);
    assert_eq!(area_decl.kind, K::Method);
    assert_eq!(sym(&fs, "sides", Some("geo::Shape")).kind, K::Field);
    assert_eq!(sym(&fs, "draw", Some("geo::Shape")).kind, K::Method);
    let area_def = sym(&fs, "area", Some("Shape"));
    assert!(!area_def.declaration);
    assert_eq!(area_def.kind, K::Method);
    assert_span(src, area_def, (10, 10));
    let ctor_defs: Vec<_> = fs
        .symbols
        .iter()
        .filter(|s| s.name == "Shape" && s.kind == K::Method)
        .collect();
    assert_eq!(ctor_defs.len(), 2, "{:#?}", outline(&fs));
    assert_eq!(sym(&fs, "twice", Some("geo")).kind, K::Function);
    assert_eq!(callers(&fs, "render"), vec!["draw"]);
    assert_eq!(callers(&fs, "compute"), vec!["area"]);
}

#[test]
fn ruby_modules_classes_and_singleton_methods() {
    let src = r#"require "json"
require_relative "lib/util"

# Billing things.
module Billing
  RATE = 3

  class Invoice < Base
    # Creates one.
    def self.create(attrs)
      new(attrs).tap { |i| i.save }
    end

    class << self
      def cached; end
    end

    def initialize(attrs)
      @attrs = attrs
    end

    def total
      compute_total(@attrs)
    end
  end
end

class Billing::Report; end

def top_level; end
"#;
    let fs = index("a.rb", src);
    let billing = sym(&fs, "Billing", None);
    assert_eq!(billing.kind, K::Module);
    assert_eq!(billing.doc.as_deref(), Some("Billing things."));
    assert_span(src, billing, (4, 25));
    assert_eq!(sym(&fs, "RATE", Some("Billing")).kind, K::Constant);
    let invoice = sym(&fs, "Invoice", Some("Billing"));
    assert_eq!(invoice.kind, K::Class);
    let create = sym(&fs, "create", Some("Billing::Invoice"));
    assert_eq!(create.kind, K::Method);
    assert_eq!(create.signature, "def self.create(attrs)");
    assert_eq!(create.doc.as_deref(), Some("Creates one."));
    assert_span(src, create, (9, 11));
    assert_eq!(sym(&fs, "cached", Some("Billing::Invoice")).kind, K::Method);
    assert_eq!(
        sym(&fs, "initialize", Some("Billing::Invoice")).kind,
        K::Constructor
    );
    assert_eq!(sym(&fs, "total", Some("Billing::Invoice")).kind, K::Method);
    assert_eq!(sym(&fs, "Report", Some("Billing")).kind, K::Class);
    assert_eq!(sym(&fs, "top_level", None).kind, K::Function);
    assert_eq!(callers(&fs, "compute_total"), vec!["total"]);
    assert_eq!(callers(&fs, "save"), vec!["create"]);
    assert_eq!(
        imports(&fs),
        vec![
            ("json".to_string(), "json".to_string()),
            ("util".to_string(), "lib/util".to_string())
        ]
    );
}

#[test]
fn every_language_parses_its_extension() {
    for (file, src) in [
        ("a.rs", "fn f() {}"),
        ("a.py", "def f(): pass"),
        ("a.ts", "function f() {}"),
        ("a.tsx", "function f() { return <a/>; }"),
        ("a.js", "function f() {}"),
        ("a.go", "package a\nfunc f() {}"),
        ("A.java", "class A { void f() {} }"),
        ("a.c", "void f(void) {}"),
        ("a.cc", "void f() {}"),
        ("a.rb", "def f; end"),
    ] {
        let fs = index(file, src);
        assert!(
            fs.symbols.iter().any(|s| s.name == "f"),
            "{file}: {:?}",
            outline(&fs)
        );
    }
}

#[test]
fn invalid_utf8_is_indexed_lossily() {
    let mut src =
        b"fn good() {}\n// \xff\xfe bad bytes\nfn also_good() { let s = \"\xc3\x28\"; }\n".to_vec();
    src.extend_from_slice(b"fn \xffweird() {}\n");
    let lang = Lang::for_path(Path::new("a.rs")).unwrap();
    let fs = parse_and_extract(lang, &src).unwrap();
    assert!(fs.symbols.iter().any(|s| s.name == "good"));
    assert!(fs.symbols.iter().any(|s| s.name == "also_good"));
}

/// A comment is a doc only when it ends on the row above the definition (or before it on
/// its own row); a blank line in between, the start of the file, or CRLF line ends change
/// nothing about that (the blank-line shortcut must agree with the sibling walk).
#[test]
fn docs_need_an_adjacent_comment_whatever_the_line_ends() {
    for nl in ["\n", "\r\n"] {
        let go = [
            "package p",
            "",
            "// Far is not a doc: a blank line follows.",
            "",
            "func Far() {}",
            "// Near documents Near.",
            "func Near() {}",
            "  \t",
            "func Bare() {}",
            "/* Same */ func Same() {}",
        ]
        .join(nl);
        let fs = index("a.go", &go);
        let doc = |n: &str| sym(&fs, n, None).doc.clone();
        assert_eq!(doc("Far"), None, "{nl:?}");
        assert_eq!(
            doc("Near").as_deref(),
            Some("Near documents Near."),
            "{nl:?}"
        );
        assert_eq!(doc("Bare"), None, "{nl:?}");
        assert_eq!(doc("Same").as_deref(), Some("Same"), "{nl:?}");
        let ts = [
            "function first() {}",
            "",
            "/** Second. */",
            "function second() {}",
        ]
        .join(nl);
        let fs = index("a.ts", &ts);
        assert_eq!(sym(&fs, "first", None).doc, None);
        assert_eq!(sym(&fs, "second", None).doc.as_deref(), Some("Second."));
    }
}

/// The kinds a language guards are its grammar's: a misspelt one is silently never matched,
/// and the walk is just slower. Opaque lists are shared (C with C++, JavaScript with
/// TypeScript), so each of their kinds need only be some sharer's.
#[test]
fn every_guarded_or_opaque_kind_is_a_grammars() {
    let has = |lang: Lang, kind: &str| lang.spec().grammar().id_for_node_kind(kind, true) != 0;
    for lang in Lang::all() {
        let spec = lang.spec();
        for kind in spec.guarded() {
            assert!(
                has(lang, kind),
                "{}: guarded `{kind}` is no named kind of its grammar",
                lang.name()
            );
        }
        for kind in spec.opaque() {
            assert!(
                Lang::all().any(|other| other.spec().opaque() == spec.opaque() && has(other, kind)),
                "{}: opaque `{kind}` is no named kind of any grammar sharing the list",
                lang.name()
            );
        }
        assert!(spec.triggers().len() <= 3, "{}", lang.name());
        assert_eq!(
            spec.guarded().is_empty(),
            spec.triggers().is_empty(),
            "{}",
            lang.name()
        );
    }
}

/// What sits inside a guarded kind (an expression, a type) is still found when the text
/// carries a trigger byte: struct types and function literals in Go composite literals,
/// calls in Python default values and lambdas, items in a Rust block passed as an argument.
/// Debug builds also check every skip against the subtree (`extract.rs`).
#[test]
fn what_guarded_expressions_hold_is_still_found() {
    let go = "package p\n\
              var table = []struct{ Name string }{{Name: made()}}\n\
              var hooks = map[string]func(){\"x\": func() { inner() }}\n\
              var plain = []int{1, 2, 3 + 4}\n";
    let fs = index("a.go", go);
    // A package-level `var` opens no scope: its calls are the file's.
    assert_eq!(callers(&fs, "made"), vec!["<top>"]);
    assert_eq!(callers(&fs, "inner"), vec!["<top>"]);
    let py = "def f(x=make(), y=[a + b for a in c]):\n    return (lambda: g())()\n\
              w = {'k': [h(1)]}\n";
    let fs = index("a.py", py);
    assert_eq!(callers(&fs, "make"), vec!["f"]);
    assert_eq!(callers(&fs, "g"), vec!["f"]);
    assert_eq!(callers(&fs, "h"), vec!["w"]);
    let rs = "fn main() {\n    run(x + { struct Unit; fn local() { deep() } 1 }, &[v!(), w()]);\n    \
              let t: Vec<(u8, u8)> = (0..3).map(|i| (i, i)).collect();\n}\n";
    let fs = index("a.rs", rs);
    sym(&fs, "Unit", Some("main"));
    sym(&fs, "local", Some("main"));
    assert_eq!(callers(&fs, "deep"), vec!["local"]);
    assert_eq!(callers(&fs, "v"), vec!["main"]);
    assert_eq!(callers(&fs, "w"), vec!["main"]);
    assert_eq!(callers(&fs, "collect"), vec!["main"]);
}

/// A guarded node that opens with `(` is searched past it, so an argument list, a tuple or
/// a parenthesized callee is skipped unless a call sits inside; one that does is found.
/// (A parenthesized callee, `(g)(h)`, names no callee and records no call, as before.)
#[test]
fn a_call_inside_what_opens_with_a_paren_is_still_found() {
    let py = "def f():\n    a((b), (c, d(1)), ((e)))\n    (g)(h)\n    k((lambda: m())())\n";
    let fs = index("a.py", py);
    for called in ["a", "d", "k", "m"] {
        assert_eq!(callers(&fs, called), vec!["f"], "{called}");
    }
    assert!(callers(&fs, "h").is_empty() && callers(&fs, "b").is_empty());
    let rs = "fn main() {\n    let p = (x, (y(1), z));\n    (w)(q(()));\n    \
              run((|| { fn local() { deep() } })());\n}\n";
    let fs = index("a.rs", rs);
    for called in ["y", "q", "run"] {
        assert_eq!(callers(&fs, called), vec!["main"], "{called}");
    }
    sym(&fs, "local", Some("main"));
    assert_eq!(callers(&fs, "deep"), vec!["local"]);
    let go = "package p\nfunc f() {\n\tx := (y(1))\n\t(g)(h(2))\n}\n";
    let fs = index("a.go", go);
    for called in ["y", "h"] {
        assert_eq!(callers(&fs, called), vec!["f"], "{called}");
    }
}

/// JavaScript and TypeScript guard expressions and types: what they hold is still found
/// through `(`, `{`, a backtick or the word `new`.
#[test]
fn what_guarded_javascript_and_typescript_hold_is_still_found() {
    let js = "function f() {\n  return new Visitor;\n}\n\
              const g = () => [a.b.c, css`x`, (throw_(1)), { m() { inner() } }];\n\
              function h(x = new Default, y = { k: z() }) { throw new Oops; }\n\
              const el = <div className=\"x\">{render()}</div>;\n";
    let fs = index("a.jsx", js);
    assert_eq!(callers(&fs, "Visitor"), vec!["f"]);
    for (called, by) in [("css", "g"), ("throw_", "g"), ("inner", "m"), ("Oops", "h")] {
        assert_eq!(callers(&fs, called), vec![by], "{called}");
    }
    assert_eq!(callers(&fs, "Default"), vec!["h"]);
    assert_eq!(callers(&fs, "z"), vec!["h"]);
    assert_eq!(callers(&fs, "render"), vec!["el"]);
    sym(&fs, "m", Some("g"));
    let ts = "function f(a: Map<string, { go(): void }>, b: number = new Zero): Array<() => T> {\n\
              return (a as unknown as X).get(key)!.run(new Y);\n}\n";
    let fs = index("a.ts", ts);
    sym(&fs, "go", Some("f"));
    for called in ["Zero", "get", "run", "Y"] {
        assert_eq!(callers(&fs, called), vec!["f"], "{called}");
    }
}

/// The debug check behind every skip fails loudly when a guarded kind would hide something:
/// here a Python call, handed to the check as if its argument list had no `(`.
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "guarded kinds or trigger bytes are wrong")]
fn a_skip_that_would_hide_a_call_fails_in_debug_builds() {
    let lang = Lang::for_path(Path::new("a.py")).unwrap();
    let tree = crate::index::parse::parse(lang, b"x = [f(1)]\n").unwrap();
    let list = tree.root_node().descendant_for_byte_range(4, 10).unwrap();
    assert_eq!(list.kind(), "list");
    crate::index::extract::debug_assert_nothing_interesting(lang, list);
}
