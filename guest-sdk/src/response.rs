//! Builders on a [`Response`], after function-sdk-go's `response` package.

use std::time::Duration;

use crate::{
    Condition, ConditionStatus, FunctionResult, Object, Request, Requirements, Resource,
    ResourceSelector, Response, ResponseMeta, SchemaSelector, Severity, State, Target,
};

/// The TTL [`Response::to`] sets: one minute, as function-sdk-go does.
pub const DEFAULT_TTL: Duration = Duration::from_secs(60);

impl Response {
    /// A response to `req` that passes everything through: it copies the
    /// tag, the desired state and the context, and sets [`DEFAULT_TTL`].
    pub fn to(req: &Request) -> Response {
        Response {
            meta: Some(ResponseMeta {
                tag: req.tag().to_owned(),
                ttl: Some(DEFAULT_TTL),
            }),
            desired: req.desired.clone(),
            context: req.context.clone(),
            ..Response::default()
        }
    }

    /// Sets how long the response may be cached.
    pub fn set_ttl(&mut self, ttl: Duration) -> &mut Self {
        self.meta.get_or_insert_with(ResponseMeta::default).ttl = Some(ttl);
        self
    }

    /// Appends a fatal result, which stops the pipeline.
    pub fn fatal(&mut self, message: impl Into<String>) -> &mut FunctionResult {
        self.result(Severity::Fatal, message)
    }

    /// Appends a warning result.
    pub fn warning(&mut self, message: impl Into<String>) -> &mut FunctionResult {
        self.result(Severity::Warning, message)
    }

    /// Appends a normal result.
    pub fn normal(&mut self, message: impl Into<String>) -> &mut FunctionResult {
        self.result(Severity::Normal, message)
    }

    fn result(&mut self, severity: Severity, message: impl Into<String>) -> &mut FunctionResult {
        self.results.push(FunctionResult {
            severity,
            message: message.into(),
            reason: None,
            target: Some(Target::Composite),
        });
        let last = self.results.len() - 1;
        &mut self.results[last]
    }

    /// Sets a condition of status True on the composite.
    pub fn condition_true(
        &mut self,
        r#type: impl Into<String>,
        reason: impl Into<String>,
    ) -> &mut Condition {
        self.condition(ConditionStatus::True, r#type, reason)
    }

    /// Sets a condition of status False on the composite.
    pub fn condition_false(
        &mut self,
        r#type: impl Into<String>,
        reason: impl Into<String>,
    ) -> &mut Condition {
        self.condition(ConditionStatus::False, r#type, reason)
    }

    /// Sets a condition of status Unknown on the composite.
    pub fn condition_unknown(
        &mut self,
        r#type: impl Into<String>,
        reason: impl Into<String>,
    ) -> &mut Condition {
        self.condition(ConditionStatus::Unknown, r#type, reason)
    }

    fn condition(
        &mut self,
        status: ConditionStatus,
        r#type: impl Into<String>,
        reason: impl Into<String>,
    ) -> &mut Condition {
        self.conditions.push(Condition {
            r#type: r#type.into(),
            status,
            reason: reason.into(),
            message: None,
            target: Some(Target::Composite),
        });
        let last = self.conditions.len() - 1;
        &mut self.conditions[last]
    }

    /// Sets one key of the context passed to the next step.
    pub fn set_context_key(
        &mut self,
        key: impl Into<String>,
        value: serde_json::Value,
    ) -> &mut Self {
        self.context
            .get_or_insert_with(Object::new)
            .insert(key.into(), value);
        self
    }

    /// The desired state, created empty if the response has none.
    pub fn desired_mut(&mut self) -> &mut State {
        self.desired.get_or_insert_with(State::default)
    }

    /// Replaces the desired composite resource.
    pub fn set_desired_composite(&mut self, composite: Resource) -> &mut Self {
        self.desired_mut().composite = Some(composite);
        self
    }

    /// Adds or replaces one desired composed resource.
    pub fn set_desired_composed(
        &mut self,
        name: impl Into<String>,
        resource: Resource,
    ) -> &mut Self {
        self.desired_mut().resources.insert(name.into(), resource);
        self
    }

    /// Asks to be called again with the resources `selector` matches, under `name`.
    pub fn require_resources(
        &mut self,
        name: impl Into<String>,
        selector: ResourceSelector,
    ) -> &mut Self {
        self.requirements
            .get_or_insert_with(Requirements::default)
            .resources
            .insert(name.into(), selector);
        self
    }

    /// Asks to be called again with the OpenAPI schema of `kind`, under `name`.
    pub fn require_schema(
        &mut self,
        name: impl Into<String>,
        api_version: impl Into<String>,
        kind: impl Into<String>,
    ) -> &mut Self {
        self.requirements
            .get_or_insert_with(Requirements::default)
            .schemas
            .insert(
                name.into(),
                SchemaSelector {
                    api_version: api_version.into(),
                    kind: kind.into(),
                },
            );
        self
    }

    /// Sets the output of an operation function.
    pub fn set_output(&mut self, output: Object) -> &mut Self {
        self.output = Some(output);
        self
    }

    /// Whether any result is fatal.
    pub fn is_fatal(&self) -> bool {
        self.results.iter().any(|r| r.severity == Severity::Fatal)
    }
}

impl FunctionResult {
    /// Sets the result's reason (PascalCase).
    pub fn reason(&mut self, reason: impl Into<String>) -> &mut Self {
        self.reason = Some(reason.into());
        self
    }

    /// Targets the composite only (the default).
    pub fn target_composite(&mut self) -> &mut Self {
        self.target = Some(Target::Composite);
        self
    }

    /// Targets the composite and its claim.
    pub fn target_composite_and_claim(&mut self) -> &mut Self {
        self.target = Some(Target::CompositeAndClaim);
        self
    }
}

impl Condition {
    /// Sets the condition's message.
    pub fn message(&mut self, message: impl Into<String>) -> &mut Self {
        self.message = Some(message.into());
        self
    }

    /// Targets the composite only (the default).
    pub fn target_composite(&mut self) -> &mut Self {
        self.target = Some(Target::Composite);
        self
    }

    /// Targets the composite and its claim.
    pub fn target_composite_and_claim(&mut self) -> &mut Self {
        self.target = Some(Target::CompositeAndClaim);
        self
    }
}
