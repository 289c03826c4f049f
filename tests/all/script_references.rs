//! `find_references` in Python and TypeScript through the real binary, on the fixture
//! projects `tests/fixtures/python-app` (a `src/` layout package `shop` with its tests)
//! and `tests/fixtures/ts-app`: names reached through a module or package
//! (`shop.PRICE_CAP`, `types.Money(..)`, `money.ZERO`), import and re-export lines, and
//! function-local imports are references of the definition they name, and a same-named
//! definition elsewhere keeps its own. Every line below was read off the fixture files.

use serde_json::Value;

use crate::support::{Scryer, fixture_copy};

/// `(file, line, kind)` of every site of a `view: "sites"` answer, and its `tie` if any.
fn sites(v: &Value) -> Vec<(String, u64, String, Option<String>)> {
    v["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {v}"))
        .iter()
        .map(|i| {
            (
                i["file_path"].as_str().unwrap().to_string(),
                i["line"].as_u64().unwrap(),
                i["kind"].as_str().unwrap().to_string(),
                i["tie"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn row(file: &str, line: u64, kind: &str) -> (String, u64, String, Option<String>) {
    (file.to_string(), line, kind.to_string(), None)
}

#[tokio::test]
async fn python_module_access_and_function_local_imports_are_references() {
    let (_tmp, root) = fixture_copy("python-app");
    let s = Scryer::start(&[], &[("SCRYER_DEPENDENCIES", "off")]).await;
    s.index(&root).await;

    let v = s.reference_sites("types::PRICE_CAP").await;
    assert_eq!(v["definition"]["file_path"], "src/shop/types.py", "{v}");
    assert_eq!(
        sites(&v),
        [
            // `from .types import PRICE_CAP as PRICE_CAP` in the package.
            row("src/shop/__init__.py", 2, "use"),
            // A function-local import and the name it binds.
            row("src/shop/core.py", 9, "use"),
            row("src/shop/core.py", 10, "path"),
            // `shop.PRICE_CAP` (through the package) and `types.PRICE_CAP`
            // (`from shop import types`), on one line.
            row("tests/test_cart.py", 8, "path"),
            row("tests/test_cart.py", 8, "path"),
        ],
        "{v}"
    );
    assert_eq!(v["complete"], true, "{v}");

    // The other `PRICE_CAP` keeps its own use.
    let v = s.reference_sites("legacy::PRICE_CAP").await;
    assert_eq!(sites(&v), [row("src/shop/legacy.py", 5, "path")], "{v}");

    // A class reached as `types.Money(..)` and `shop.Money(..)`, and imported in
    // parentheses.
    let v = s.reference_sites("Money").await;
    assert_eq!(
        sites(&v),
        [
            row("src/shop/__init__.py", 4, "use"),
            row("src/shop/core.py", 6, "call"),
            row("tests/test_cart.py", 15, "call"),
        ],
        "{v}"
    );

    // `os.path.exists` is not this project's `exists`.
    let v = s.reference_sites("exists").await;
    assert_eq!(v["total_sites"], 0, "{v}");

    // `cart.check(1)`: nothing says what `cart` is, so the name alone ties it.
    let v = s.reference_sites("Cart::check").await;
    assert_eq!(
        sites(&v),
        [(
            "tests/test_cart.py".to_string(),
            10,
            "method_call".to_string(),
            Some("name".to_string())
        )],
        "{v}"
    );
    assert_eq!(v["name_matched"], 1, "{v}");
    assert_eq!(v["complete"], false, "{v}");
    s.stop().await;
}

#[tokio::test]
async fn typescript_import_and_export_lines_are_references() {
    let (_tmp, root) = fixture_copy("ts-app");
    let s = Scryer::start(&[], &[("SCRYER_DEPENDENCIES", "off")]).await;
    s.index(&root).await;

    let v = s.reference_sites("models::money::Money").await;
    assert_eq!(v["definition"]["file_path"], "src/models/money.ts", "{v}");
    assert_eq!(
        sites(&v),
        [
            // `import { Money } from './models'` reaches it through the index's re-export.
            row("src/cart.ts", 1, "use"),
            row("src/cart.ts", 4, "type"),
            row("src/cart.ts", 4, "type"),
            // `new money.Money(..)` through `import * as money`.
            row("src/cart.ts", 5, "call"),
            row("src/models/index.ts", 1, "use"),
        ],
        "{v}"
    );
    assert_eq!(v["complete"], true, "{v}");

    // The other `Money` keeps its own use.
    let v = s.reference_sites("legacy::Money").await;
    assert_eq!(sites(&v), [row("src/legacy.ts", 3, "call")], "{v}");

    // An aliased re-export and a namespace member.
    let v = s.reference_sites("ZERO").await;
    assert_eq!(
        sites(&v),
        [
            row("src/cart.ts", 5, "path"),
            row("src/models/index.ts", 2, "use"),
        ],
        "{v}"
    );

    // A re-export and an aliased import.
    let v = s.reference_sites("total").await;
    assert_eq!(
        sites(&v),
        [
            row("src/index.ts", 1, "use"),
            row("src/index.ts", 3, "use"),
            // `export default sum`: `sum` is `total` renamed.
            row("src/index.ts", 5, "path"),
        ],
        "{v}"
    );
    s.stop().await;
}
