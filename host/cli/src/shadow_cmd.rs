//! `scryer plugin add --shadow | promote | drop | shadow-report`: a candidate router
//! shadow-runs beside the plugin it would replace, then is promoted or dropped (ADR
//! 0030). Like every plugin command, these never open the database: the policy and the
//! plugins directory are edited under the plugins lock, and a running server swaps.

use std::path::Path;

use anyhow::{Result, bail};
use scryer_runtime::installed::PluginHome;
use scryer_runtime::policy::ShadowPolicy;
use scryer_server::{ShadowReport, ShadowTool};

use crate::plugin_cmd::{Globals, inspect, names, offline, parse_caps};

/// `scryer plugin add --shadow <file>`: installs a candidate for the plugin serving its
/// tools. Every tool it declares must be served by that one plugin now, and it must be
/// granted everything it imports (nothing is changed otherwise).
pub async fn add(ctx: &Globals, home: &PluginHome, file: &Path, grant: &[String]) -> Result<()> {
    let extra = parse_caps(grant)?;
    let (runtime, registry) = offline(ctx, home, &[]).await?;
    let cand = inspect(&runtime, file).await?;
    let name = cand.name().to_string();
    let mut owners: Vec<String> = Vec::new();
    for tool in cand.tools() {
        let Some((owner, _)) = registry.tool(&tool) else {
            bail!(
                "cannot shadow with `{name}` (nothing was changed): no serving plugin answers its tool `{tool}`; \
                 a candidate declares only tools of the one router it would replace (served now: {})",
                registry.tool_names().join(", ")
            );
        };
        if !owners.iter().any(|o| o == owner.name()) {
            owners.push(owner.name().to_string());
        }
    }
    let [of] = owners.as_slice() else {
        bail!(
            "cannot shadow with `{name}` (nothing was changed): its tools are served by {}; a candidate replaces one router",
            owners.join(" and ")
        );
    };
    let _lock = home.lock().map_err(anyhow::Error::msg)?;
    let mut policy = home.read_policy().map_err(anyhow::Error::msg)?;
    let granted = policy
        .shadows
        .get(&name)
        .map(ShadowPolicy::granted)
        .unwrap_or_default()
        .union(&extra);
    let missing = granted.missing(&cand.requirements.needs);
    if !missing.is_empty() {
        bail!(
            "cannot shadow with `{name}` (nothing was changed): it needs {} not granted; add it with `--grant {}`",
            names(&missing),
            missing.names().join(",")
        );
    }
    let mut entry = ShadowPolicy {
        of: of.clone(),
        grants: Vec::new(),
        receipt: cand.receipt(),
    };
    entry.grants = granted.names().into_iter().map(String::from).collect();
    policy.shadows.insert(name.clone(), entry);
    let dest = home
        .publish_shadow(&name, &cand.wasm, &policy)
        .map_err(|e| anyhow::anyhow!("cannot shadow with `{name}`: {e}"))?;
    println!(
        "added {name} {} (sha256 {}) as {} to shadow {of}: tools {}; granted [{}]. A running server runs it beside {of} on every call of those tools now; \
         `scryer plugin shadow-report` shows how they compare, `scryer plugin promote {name}` swaps it in, `scryer plugin drop {name}` removes it.",
        cand.plugin.description.version,
        cand.sha256,
        dest.display(),
        cand.tools().join(", "),
        names(&granted)
    );
    Ok(())
}

fn no_candidate(name: &str, policy: &scryer_runtime::policy::Policy) -> anyhow::Error {
    let known: Vec<&str> = policy.shadows.keys().map(String::as_str).collect();
    anyhow::anyhow!(
        "no shadow candidate `{name}` ({}); add one with `scryer plugin add --shadow <file>`",
        if known.is_empty() {
            "none is installed".to_string()
        } else {
            format!("candidates: {}", known.join(", "))
        }
    )
}

/// `scryer plugin promote <name>`: the candidate becomes the installed plugin answering
/// the tools of the one it shadowed (an installed plugin of its own name is upgraded;
/// another installed plugin is removed; a built-in router is replaced with `replaces`).
pub fn promote(home: &PluginHome, name: &str) -> Result<()> {
    let _lock = home.lock().map_err(anyhow::Error::msg)?;
    let mut policy = home.read_policy().map_err(anyhow::Error::msg)?;
    let Some(shadow) = policy.shadows.remove(name) else {
        return Err(no_candidate(name, &policy));
    };
    let wasm = std::fs::read(home.shadow_path(name))
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", home.shadow_path(name).display()))?;
    shadow
        .receipt
        .check(name, &wasm)
        .map_err(anyhow::Error::msg)?;
    let of = shadow.of.clone();
    let previous = policy.plugins.get(&of).cloned();
    let replaces = match &previous {
        Some(p) => p.replaces.clone(),
        None => Some(of.clone()),
    };
    if of != name {
        policy.plugins.remove(&of);
    }
    let mut entry = policy.plugins.get(name).cloned().unwrap_or_default();
    entry.grants = shadow.grants.clone();
    entry.receipt = Some(shadow.receipt.clone());
    entry.pending = None;
    entry.replaces = replaces.filter(|r| r != name || previous.is_none());
    policy.plugins.insert(name.to_string(), entry);
    let dest = home
        .publish(name, &wasm, false, &policy)
        .map_err(|e| anyhow::anyhow!("cannot promote `{name}`: {e}"))?;
    let _ = std::fs::remove_file(home.shadow_path(name));
    if of != name && previous.is_some() {
        let _ = std::fs::remove_file(home.wasm_path(&of));
    }
    println!(
        "promoted {name} {} to {}: it answers the tools of {of} now{}. A running server swaps it in and tells its sessions.",
        shadow.receipt.version,
        dest.display(),
        match (&previous, of == name) {
            (Some(_), true) => String::new(),
            (Some(_), false) => format!(" (the installed {of} was removed)"),
            (None, _) => format!(" (it replaces the built-in {of})"),
        }
    );
    Ok(())
}

/// `scryer plugin drop <name>`: removes a candidate; the serving plugin is untouched.
pub fn drop(home: &PluginHome, name: &str) -> Result<()> {
    let _lock = home.lock().map_err(anyhow::Error::msg)?;
    let mut policy = home.read_policy().map_err(anyhow::Error::msg)?;
    let Some(shadow) = policy.shadows.remove(name) else {
        return Err(no_candidate(name, &policy));
    };
    policy
        .write(&home.policy_path())
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", home.policy_path().display()))?;
    let _ = std::fs::remove_file(home.shadow_path(name));
    println!(
        "dropped the candidate {name} {}; {} keeps serving",
        shadow.receipt.version, shadow.of
    );
    Ok(())
}

/// A candidate's line in `scryer plugin list`.
pub fn status_line(s: &scryer_server::ShadowStatus) -> String {
    match &s.outcome {
        Ok(p) => format!(
            "{} {}: shadow candidate of {} (loaded): {}",
            s.name,
            s.version,
            s.of,
            p.description
                .tools
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(why) => format!(
            "{} {}: shadow candidate of {} (refused): {why}",
            s.name, s.version, s.of
        ),
    }
}

/// One tool's line of the report.
fn line(t: &ShadowTool) -> String {
    let ms = |m: Option<u32>| {
        m.map(|us| format!("{:.1} ms", f64::from(us) / 1000.0))
            .unwrap_or_else(|| "-".into())
    };
    let mut s = format!(
        "  {}: {} compared, {} same, {} different; errors: candidate {}, serving {}; skipped {}; median {} serving vs {} candidate (max {} vs {})",
        t.tool,
        t.compared,
        t.same,
        t.different,
        t.candidate_errors,
        t.serving_errors,
        t.skipped,
        ms(t.serving_median_us),
        ms(t.candidate_median_us),
        ms(t.serving_max_us),
        ms(t.candidate_max_us),
    );
    for (how, n) in &t.differences {
        s.push_str(&format!("\n    {n} × {how}"));
    }
    s
}

/// `scryer plugin shadow-report`: what running servers found for each candidate, per
/// tool. Differences are summarised by the JSON keys that differ, never their values.
pub fn report(home: &PluginHome) -> Result<()> {
    let policy = home.read_policy().map_err(anyhow::Error::msg)?;
    if policy.shadows.is_empty() {
        println!(
            "no shadow candidate is installed; add one with `scryer plugin add --shadow <file>`"
        );
        return Ok(());
    }
    let running = ShadowReport::running(home);
    for (name, shadow) in &policy.shadows {
        println!("{name} {} shadows {}:", shadow.receipt.version, shadow.of);
        let rows: Vec<(&ShadowReport, &ShadowTool)> = running
            .iter()
            .flat_map(|r| r.tools.iter().map(move |t| (r, t)))
            .filter(|(_, t)| t.candidate == *name)
            .collect();
        if rows.is_empty() {
            println!("  no call was shadowed yet by a running server");
        }
        for (r, t) in rows {
            if running.len() > 1 {
                println!("  (server pid {}, database {})", r.pid, r.database);
            }
            println!("{}", line(t));
        }
    }
    Ok(())
}
