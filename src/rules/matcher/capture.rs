//! `capture`: names the op for the message template, labels and `scheduled_between.and`.

use super::{Caps, Env, Kind, Phase};
use crate::ir::{Module, OpId};
use crate::rules::error::{Cx, RuleError, RuleErrorKind};
use crate::rules::template::GLOBALS;

keys! {
    pub struct CaptureDef {
        /// Names this op for the message template and labels.
        pub capture: Option<String>,
    }
}

pub struct Capture(String);

impl Kind for Capture {
    type Def = CaptureDef;
    const PHASE: Phase = Phase::Capture;

    fn compile(def: &CaptureDef, cx: &Cx, env: &mut Env) -> Result<Vec<Capture>, RuleError> {
        let Some(c) = &def.capture else { return Ok(Vec::new()) };
        if env.caps.contains(c) || c == "analysis" || GLOBALS.contains(&c.as_str()) {
            return Err(cx.at("capture").err(
                RuleErrorKind::Matcher,
                format!("capture name `{c}` is used twice or reserved"),
                "here",
            ));
        }
        env.caps.push(c.clone());
        Ok(vec![Capture(c.clone())])
    }

    fn holds(&self, _: &Module<'_>, id: OpId, caps: &mut Caps) -> bool {
        caps.insert(self.0.clone(), id);
        true
    }
}
