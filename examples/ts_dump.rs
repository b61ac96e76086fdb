//! Prints the syntax tree of a file: `cargo run --example ts_dump FILE`.
fn main() {
    let path = std::env::args().nth(1).expect("usage: ts_dump FILE");
    let src = std::fs::read(&path).expect("readable file");
    let lang = mira::index::Lang::for_path(std::path::Path::new(&path)).expect("known language");
    let tree = mira::index::parse::parse(lang, &src).expect("parses");
    println!("{}", tree.root_node().to_sexp());
}
