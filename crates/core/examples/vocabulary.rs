//! Prints the TypeScript declarations of the package's enumerations, or with
//! `--write` puts them into `index.d.ts` (see `dsh_shell_env_core::vocabulary`).

use dsh_shell_env_core::vocabulary;

fn main() {
    if std::env::args().nth(1).as_deref() != Some("--write") {
        println!("{}", vocabulary::typescript());
        return;
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../index.d.ts");
    let text = std::fs::read_to_string(path).expect("index.d.ts");
    let regenerated = vocabulary::regenerate(&text).expect("index.d.ts has no generated region");
    std::fs::write(path, regenerated).expect("writing index.d.ts");
}
