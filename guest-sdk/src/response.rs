//! Builders on a [`Response`], after function-sdk-go's `response` package.

use std::time::Duration;

use crate::{
    Condition, ConditionStatus, FunctionResult, Object, Request, Requirements, Resource,
    ResourceSelector, Response, ResponseMeta, SchemaSelector, Severity, State, Target,
};

/// The TTL [`Response::to`] sets: one minute, as function-sdk-go does.
///
/// ```
/// assert_eq!(xfn_sdk::DEFAULT_TTL.as_secs(), 60);
/// ```
pub const DEFAULT_TTL: Duration = Duration::from_secs(60);

impl Response {
    /// A response to `req` that passes everything through: it copies the
    /// tag, the desired state and the context, and sets [`DEFAULT_TTL`].
    ///
    /// ```
    /// let req = xfn_sdk::Request::default();
    /// let rsp = xfn_sdk::Response::to(&req);
    /// assert_eq!(rsp.meta.unwrap().ttl, Some(xfn_sdk::DEFAULT_TTL));
    /// ```
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
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.set_ttl(std::time::Duration::from_secs(5));
    /// assert_eq!(rsp.meta.unwrap().ttl, Some(std::time::Duration::from_secs(5)));
    /// ```
    pub fn set_ttl(&mut self, ttl: Duration) -> &mut Self {
        self.meta.get_or_insert_with(ResponseMeta::default).ttl = Some(ttl);
        self
    }

    /// Appends a fatal result, which stops the pipeline.
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.fatal("spec.region is required").reason("MissingRegion");
    /// assert!(rsp.is_fatal());
    /// ```
    pub fn fatal(&mut self, message: impl Into<String>) -> &mut FunctionResult {
        self.result(Severity::Fatal, message)
    }

    /// Appends a warning result.
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.warning("region defaulted");
    /// assert_eq!(rsp.results[0].severity, xfn_sdk::Severity::Warning);
    /// ```
    pub fn warning(&mut self, message: impl Into<String>) -> &mut FunctionResult {
        self.result(Severity::Warning, message)
    }

    /// Appends a normal result.
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.normal("created a bucket").target_composite_and_claim();
    /// assert_eq!(rsp.results[0].severity, xfn_sdk::Severity::Normal);
    /// ```
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
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.condition_true("DatabaseReady", "Available").message("all good");
    /// assert_eq!(rsp.conditions[0].status, xfn_sdk::ConditionStatus::True);
    /// ```
    pub fn condition_true(
        &mut self,
        r#type: impl Into<String>,
        reason: impl Into<String>,
    ) -> &mut Condition {
        self.condition(ConditionStatus::True, r#type, reason)
    }

    /// Sets a condition of status False on the composite.
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.condition_false("DatabaseReady", "Creating");
    /// assert_eq!(rsp.conditions[0].status, xfn_sdk::ConditionStatus::False);
    /// ```
    pub fn condition_false(
        &mut self,
        r#type: impl Into<String>,
        reason: impl Into<String>,
    ) -> &mut Condition {
        self.condition(ConditionStatus::False, r#type, reason)
    }

    /// Sets a condition of status Unknown on the composite.
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.condition_unknown("DatabaseReady", "Pending");
    /// assert_eq!(rsp.conditions[0].status, xfn_sdk::ConditionStatus::Unknown);
    /// ```
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
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.set_context_key("region", "eu-west-1".into());
    /// assert_eq!(rsp.context.unwrap()["region"], "eu-west-1");
    /// ```
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
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.desired_mut().resources.clear();
    /// assert!(rsp.desired.is_some());
    /// ```
    pub fn desired_mut(&mut self) -> &mut State {
        self.desired.get_or_insert_with(State::default)
    }

    /// Replaces the desired composite resource.
    ///
    /// ```
    /// let mut xr = xfn_sdk::Resource::new();
    /// xr.set_string("status.phase", "Ready").unwrap();
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.set_desired_composite(xr);
    /// assert!(rsp.desired.unwrap().composite.is_some());
    /// ```
    pub fn set_desired_composite(&mut self, composite: Resource) -> &mut Self {
        self.desired_mut().composite = Some(composite);
        self
    }

    /// Adds or replaces one desired composed resource.
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.set_desired_composed("bucket", xfn_sdk::Resource::new());
    /// assert!(rsp.desired.unwrap().resources.contains_key("bucket"));
    /// ```
    pub fn set_desired_composed(
        &mut self,
        name: impl Into<String>,
        resource: Resource,
    ) -> &mut Self {
        self.desired_mut().resources.insert(name.into(), resource);
        self
    }

    /// Asks to be called again with the resources `selector` matches, under `name`.
    ///
    /// ```
    /// use xfn_sdk::{ResourceMatch, ResourceSelector};
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.require_resources("vpc", ResourceSelector {
    ///     api_version: "ec2.aws.upbound.io/v1beta1".into(),
    ///     kind: "VPC".into(),
    ///     r#match: Some(ResourceMatch::MatchName("main".into())),
    ///     namespace: None,
    /// });
    /// assert!(rsp.requirements.unwrap().resources.contains_key("vpc"));
    /// ```
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
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.require_schema("bucket", "s3.aws.upbound.io/v1beta1", "Bucket");
    /// assert!(rsp.requirements.unwrap().schemas.contains_key("bucket"));
    /// ```
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
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.set_output(xfn_sdk::Object::new());
    /// assert!(rsp.output.is_some());
    /// ```
    pub fn set_output(&mut self, output: Object) -> &mut Self {
        self.output = Some(output);
        self
    }

    /// Whether any result is fatal.
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.warning("careful");
    /// assert!(!rsp.is_fatal());
    /// ```
    pub fn is_fatal(&self) -> bool {
        self.results.iter().any(|r| r.severity == Severity::Fatal)
    }
}

impl FunctionResult {
    /// Sets the result's reason (PascalCase).
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.normal("done").reason("Composed");
    /// assert_eq!(rsp.results[0].reason.as_deref(), Some("Composed"));
    /// ```
    pub fn reason(&mut self, reason: impl Into<String>) -> &mut Self {
        self.reason = Some(reason.into());
        self
    }

    /// Targets the composite only (the default).
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.normal("done").target_composite();
    /// assert_eq!(rsp.results[0].target, Some(xfn_sdk::Target::Composite));
    /// ```
    pub fn target_composite(&mut self) -> &mut Self {
        self.target = Some(Target::Composite);
        self
    }

    /// Targets the composite and its claim.
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.warning("slow").target_composite_and_claim();
    /// assert_eq!(rsp.results[0].target, Some(xfn_sdk::Target::CompositeAndClaim));
    /// ```
    pub fn target_composite_and_claim(&mut self) -> &mut Self {
        self.target = Some(Target::CompositeAndClaim);
        self
    }
}

impl Condition {
    /// Sets the condition's message.
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.condition_false("Ready", "Creating").message("waiting for the VPC");
    /// assert_eq!(rsp.conditions[0].message.as_deref(), Some("waiting for the VPC"));
    /// ```
    pub fn message(&mut self, message: impl Into<String>) -> &mut Self {
        self.message = Some(message.into());
        self
    }

    /// Targets the composite only (the default).
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.condition_true("Synced", "Ok").target_composite();
    /// assert_eq!(rsp.conditions[0].target, Some(xfn_sdk::Target::Composite));
    /// ```
    pub fn target_composite(&mut self) -> &mut Self {
        self.target = Some(Target::Composite);
        self
    }

    /// Targets the composite and its claim.
    ///
    /// ```
    /// let mut rsp = xfn_sdk::Response::default();
    /// rsp.condition_true("Synced", "Ok").target_composite_and_claim();
    /// assert_eq!(rsp.conditions[0].target, Some(xfn_sdk::Target::CompositeAndClaim));
    /// ```
    pub fn target_composite_and_claim(&mut self) -> &mut Self {
        self.target = Some(Target::CompositeAndClaim);
        self
    }
}
