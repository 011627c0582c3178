//! Runs a Composition's function pipeline with Crossplane's semantics.
//!
//! * Every step is sent the same observed state, the desired state and
//!   context returned by the step before it, its own input and credentials,
//!   and the resources and schemas its bootstrap requirements resolve to.
//! * A step's desired state and context replace the previous ones wholesale.
//! * A fatal result stops the pipeline at once.
//! * A step that returns requirements is called again with them resolved,
//!   and with the context it returned, until its requirements are stable:
//!   at most [`MAX_CALLS_PER_STEP`] calls.
//! * Results, conditions and requirements are collected per step.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::function::Function;
use crate::protocol::{
    ALL_CAPABILITIES, Condition, Credentials, FunctionResult, RequestMeta, Requirements,
    ResourceSelector, Resources, RunFunctionRequest, RunFunctionResponse, Schema, SchemaSelector,
    State,
};

/// Crossplane's `MaxRequirementsIterations`.
pub const MAX_REQUIREMENTS_ITERATIONS: usize = 5;

/// Most calls of one step: the first, plus one per requirements iteration.
pub const MAX_CALLS_PER_STEP: usize = MAX_REQUIREMENTS_ITERATIONS + 1;

/// Most requirements (resources, extra resources and schemas, by name) one
/// response may ask for. Crossplane sets no number; real functions ask for
/// a handful, and each one is resolved against every resource given.
pub const MAX_REQUIREMENTS: usize = 1_000;

/// Most bytes of resources the requirements of one call may resolve to:
/// 64 MiB. Every resource a selector matches is copied into the next
/// request, so a few selectors that each match everything could otherwise
/// take a pipeline to gigabytes before a function runs.
pub const MAX_RESOLVED_BYTES: usize = 64 << 20;

/// One pipeline step.
#[derive(Debug, Clone, Default)]
pub struct Step {
    /// The step's name.
    pub name: String,
    /// The function it calls (`functionRef.name`).
    pub function: String,
    /// Its input, as JSON object text.
    pub input: Option<String>,
    /// Credentials, by name.
    pub credentials: Vec<(String, Credentials)>,
    /// Bootstrap required resources, by requirement name.
    pub required_resources: Vec<(String, ResourceSelector)>,
    /// Bootstrap required schemas, by requirement name.
    pub required_schemas: Vec<(String, SchemaSelector)>,
}

/// Resolves what functions require: resources and schemas.
pub trait Resolver: Send + Sync {
    /// The resources `selector` matches. An empty list means "looked, none".
    fn resources(&self, selector: &ResourceSelector) -> Result<Resources, String>;

    /// The schema `selector` names. `openapi_v3: None` means "looked, not found".
    fn schema(&self, selector: &SchemaSelector) -> Result<Schema, String>;
}

/// A resolver that finds nothing: every requirement resolves empty.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoResources;

impl Resolver for NoResources {
    fn resources(&self, _: &ResourceSelector) -> Result<Resources, String> {
        Ok(Resources { items: Vec::new() })
    }

    fn schema(&self, _: &SchemaSelector) -> Result<Schema, String> {
        Ok(Schema { openapi_v3: None })
    }
}

/// A non-fatal result, with the step that returned it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepResult {
    /// The step's name.
    pub step: String,
    /// The result.
    pub result: FunctionResult,
}

/// What a pipeline produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PipelineOutput {
    /// The desired state returned by the last step.
    pub desired: State,
    /// The context returned by the last step, if it returned one.
    pub context: Option<String>,
    /// Non-fatal results, in pipeline order.
    pub results: Vec<StepResult>,
    /// Conditions, in pipeline order.
    pub conditions: Vec<Condition>,
    /// The last requirements of each step that returned any, in pipeline order.
    pub requirements: Vec<(String, Requirements)>,
    /// The smallest non-zero TTL any step returned.
    pub ttl: Option<Duration>,
    /// The `output` of each step that returned one (operation functions),
    /// as JSON object text, in pipeline order.
    pub outputs: Vec<(String, String)>,
}

/// Why a pipeline failed.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// A step's input is not a JSON object.
    #[error("cannot unmarshal input for Composition pipeline step {step:?}: {reason}")]
    Input {
        /// The step.
        step: String,
        /// What is wrong with the input.
        reason: String,
    },
    /// A step names a function the pipeline doesn't have.
    #[error(
        "cannot run pipeline step {step:?}: unknown Function {function:?} - does it exist in your Functions file?"
    )]
    UnknownFunction {
        /// The step.
        step: String,
        /// The function it names.
        function: String,
    },
    /// A call failed.
    #[error("cannot run pipeline step {step:?}: {error}")]
    Call {
        /// The step.
        step: String,
        /// Why the call failed.
        error: crate::CallError,
    },
    /// A requirement could not be resolved.
    #[error(
        "cannot run pipeline step {step:?}: cannot resolve requirement {requirement:?}: {reason}"
    )]
    Resolve {
        /// The step.
        step: String,
        /// The requirement's name.
        requirement: String,
        /// Why.
        reason: String,
    },
    /// A step asked for more requirements, or more resources, than one
    /// call may be sent.
    #[error("cannot run pipeline step {step:?}: {reason}")]
    TooMuchRequired {
        /// The step.
        step: String,
        /// Which bound, and by how much.
        reason: String,
    },
    /// A step kept changing its requirements.
    #[error(
        "cannot run pipeline step {step:?}: requirements didn't stabilize after the maximum number of iterations ({MAX_REQUIREMENTS_ITERATIONS})"
    )]
    Unstable {
        /// The step.
        step: String,
    },
    /// A step returned a fatal result.
    #[error("pipeline step {step:?} returned a fatal result: {message}")]
    Fatal {
        /// The step.
        step: String,
        /// The fatal result's message.
        message: String,
        /// The requirements returned so far, including the failing step's.
        requirements: Vec<(String, Requirements)>,
    },
}

/// The functions a pipeline can call, by name.
pub type Functions = HashMap<String, Arc<dyn Function>>;

/// A pipeline: steps, the functions they call, and where requirements are resolved.
pub struct Pipeline<'a> {
    /// The steps, in order.
    pub steps: &'a [Step],
    /// The functions, by name.
    pub functions: &'a Functions,
    /// Resolves requirements.
    pub resolver: &'a dyn Resolver,
    /// Deadline of each call, if tighter than the functions' own.
    pub call_timeout: Option<Duration>,
}

/// Where Crossplane versions differ in how they run a pipeline.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Computes each step's `meta.tag` from its request (as it is before
    /// `meta` is set). Without it the tag is empty, as classic render sends it.
    pub tag: Option<fn(&RunFunctionRequest) -> String>,
    /// Stop after the first call when its requirements resolve to exactly
    /// what the step was already sent (Crossplane after v2.2).
    pub stop_when_satisfied: bool,
}

impl Pipeline<'_> {
    /// Runs every step against `observed`, starting from an empty desired
    /// state and the given context.
    pub async fn run(
        &self,
        observed: State,
        context: Option<String>,
    ) -> Result<PipelineOutput, PipelineError> {
        self.run_with(Some(observed), context, RunOptions::default())
            .await
    }

    /// [`Pipeline::run`], the way `options` say. Without `observed`, as
    /// Crossplane runs an Operation's pipeline, steps are sent none.
    pub async fn run_with(
        &self,
        observed: Option<State>,
        context: Option<String>,
        options: RunOptions,
    ) -> Result<PipelineOutput, PipelineError> {
        let mut out = PipelineOutput {
            context,
            ..PipelineOutput::default()
        };
        for step in self.steps {
            let function = self.functions.get(&step.function).ok_or_else(|| {
                PipelineError::UnknownFunction {
                    step: step.name.clone(),
                    function: step.function.clone(),
                }
            })?;
            if let Some(input) = &step.input {
                crate::response_check::check_object(input, "input").map_err(|reason| {
                    PipelineError::Input {
                        step: step.name.clone(),
                        reason,
                    }
                })?;
            }
            check_count(
                step,
                step.required_resources.len() + step.required_schemas.len(),
            )?;
            let mut budget = ResolvedBudget::new(step);
            let mut request = RunFunctionRequest {
                meta: None,
                observed: observed.clone(),
                desired: Some(std::mem::take(&mut out.desired)),
                input: step.input.clone(),
                context: out.context.take(),
                extra_resources: Vec::new(),
                credentials: step.credentials.clone(),
                required_resources: self.resolve_resources(
                    step,
                    &step.required_resources,
                    &mut budget,
                )?,
                required_schemas: self.resolve_schemas(step, &step.required_schemas)?,
            };
            request.meta = Some(RequestMeta {
                tag: options.tag.map(|tag| tag(&request)).unwrap_or_default(),
                capabilities: ALL_CAPABILITIES.to_vec(),
            });
            let response = self
                .call_until_stable(step, function.as_ref(), request, options)
                .await?;

            if let Some(requirements) = &response.requirements {
                out.requirements
                    .push((step.name.clone(), requirements.clone()));
            }
            if let Some(fatal) = response.fatal_result() {
                return Err(PipelineError::Fatal {
                    step: step.name.clone(),
                    message: fatal.message.clone(),
                    requirements: out.requirements,
                });
            }
            if let Some(ttl) = response.meta.as_ref().and_then(|m| m.ttl.as_ref()) {
                let ttl = Duration::new(
                    u64::try_from(ttl.seconds).unwrap_or(0),
                    u32::try_from(ttl.nanos).unwrap_or(0),
                );
                if !ttl.is_zero() {
                    out.ttl = Some(out.ttl.map_or(ttl, |t| t.min(ttl)));
                }
            }
            out.desired = response.desired.unwrap_or_default();
            out.context = response.context;
            if let Some(output) = response.output {
                // A step that runs twice under one name keeps its last output,
                // as Crossplane's AddPipelineStepOutput does.
                out.outputs.retain(|(name, _)| name != &step.name);
                out.outputs.push((step.name.clone(), output));
            }
            out.conditions.extend(response.conditions);
            out.results
                .extend(response.results.into_iter().map(|result| StepResult {
                    step: step.name.clone(),
                    result,
                }));
        }
        Ok(out)
    }

    /// Calls a step's function, resolving its requirements, until they are stable.
    async fn call_until_stable(
        &self,
        step: &Step,
        function: &dyn Function,
        mut request: RunFunctionRequest,
        options: RunOptions,
    ) -> Result<RunFunctionResponse, PipelineError> {
        // What the bootstrap requirements resolved to stays in every call.
        let bootstrap_resources = request.required_resources.clone();
        let bootstrap_schemas = request.required_schemas.clone();
        let mut previous: Option<Requirements> = None;
        for call in 0..MAX_CALLS_PER_STEP {
            let calling = function.call(&request, self.call_timeout);
            let response = crate::guest_log::in_step(&step.name, calling)
                .await
                .map_err(|error| PipelineError::Call {
                    step: step.name.clone(),
                    error,
                })?;
            if response.fatal_result().is_some() {
                return Ok(response);
            }
            let current = response.requirements.clone().map(normalized);
            if current == previous {
                return Ok(response);
            }
            if let Some(requirements) = &current {
                check_count(
                    step,
                    requirements.resources.len()
                        + requirements.extra_resources.len()
                        + requirements.schemas.len(),
                )?;
                let mut budget = ResolvedBudget::new(step);
                budget.spend(&bootstrap_resources)?;
                let mut resources = bootstrap_resources.clone();
                resources.extend(self.resolve_resources(
                    step,
                    &requirements.resources,
                    &mut budget,
                )?);
                let resources = dedup_last(resources);
                let extra = dedup_last(self.resolve_resources(
                    step,
                    &requirements.extra_resources,
                    &mut budget,
                )?);
                let mut schemas = bootstrap_schemas.clone();
                schemas.extend(self.resolve_schemas(step, &requirements.schemas)?);
                let schemas = dedup_last(schemas);
                if options.stop_when_satisfied
                    && call == 0
                    && resources == dedup_last(request.required_resources.clone())
                    && extra == dedup_last(request.extra_resources.clone())
                    && schemas == dedup_last(request.required_schemas.clone())
                {
                    return Ok(response);
                }
                request.required_resources = resources;
                request.extra_resources = extra;
                request.required_schemas = schemas;
            }
            request.context = response.context;
            previous = current;
        }
        Err(PipelineError::Unstable {
            step: step.name.clone(),
        })
    }

    /// Resolves each selector, the last of a repeated name only (as a
    /// protobuf map keeps it), within `budget`.
    fn resolve_resources(
        &self,
        step: &Step,
        selectors: &[(String, ResourceSelector)],
        budget: &mut ResolvedBudget,
    ) -> Result<Vec<(String, Resources)>, PipelineError> {
        let selectors: std::collections::BTreeMap<&str, &ResourceSelector> = selectors
            .iter()
            .map(|(name, selector)| (name.as_str(), selector))
            .collect();
        selectors
            .into_iter()
            .map(|(name, selector)| {
                let resources =
                    self.resolver
                        .resources(selector)
                        .map_err(|reason| PipelineError::Resolve {
                            step: step.name.clone(),
                            requirement: name.to_owned(),
                            reason,
                        })?;
                let resolved = (name.to_owned(), resources);
                budget.spend(std::slice::from_ref(&resolved))?;
                Ok(resolved)
            })
            .collect()
    }

    fn resolve_schemas(
        &self,
        step: &Step,
        selectors: &[(String, SchemaSelector)],
    ) -> Result<Vec<(String, Schema)>, PipelineError> {
        selectors
            .iter()
            .map(|(name, selector)| {
                let schema =
                    self.resolver
                        .schema(selector)
                        .map_err(|reason| PipelineError::Resolve {
                            step: step.name.clone(),
                            requirement: name.clone(),
                            reason,
                        })?;
                Ok((name.clone(), schema))
            })
            .collect()
    }
}

/// Refuses requirements of more than [`MAX_REQUIREMENTS`] names in all.
fn check_count(step: &Step, count: usize) -> Result<(), PipelineError> {
    if count > MAX_REQUIREMENTS {
        return Err(PipelineError::TooMuchRequired {
            step: step.name.clone(),
            reason: format!(
                "it asks for {count} requirements; xfn resolves at most {MAX_REQUIREMENTS} \
                 for one call"
            ),
        });
    }
    Ok(())
}

/// The bytes of resources one call's requirements have resolved to so far,
/// against [`MAX_RESOLVED_BYTES`].
struct ResolvedBudget<'a> {
    step: &'a Step,
    spent: usize,
}

impl<'a> ResolvedBudget<'a> {
    fn new(step: &'a Step) -> ResolvedBudget<'a> {
        ResolvedBudget { step, spent: 0 }
    }

    /// Counts `resolved`, failing once the total passes the bound.
    fn spend(&mut self, resolved: &[(String, Resources)]) -> Result<(), PipelineError> {
        let bytes: usize = resolved
            .iter()
            .flat_map(|(_, resources)| &resources.items)
            .map(|item| item.resource.as_ref().map_or(0, String::len))
            .sum();
        self.spent = self.spent.saturating_add(bytes);
        if self.spent > MAX_RESOLVED_BYTES {
            return Err(PipelineError::TooMuchRequired {
                step: self.step.name.clone(),
                reason: format!(
                    "the resources its requirements match pass {MAX_RESOLVED_BYTES} bytes ({} MiB), \
                     the most xfn sends in one call; narrow the selectors",
                    MAX_RESOLVED_BYTES >> 20
                ),
            });
        }
        Ok(())
    }
}

/// Requirements with their maps sorted by key, so equality ignores order
/// as protobuf map equality does.
fn normalized(mut r: Requirements) -> Requirements {
    r.extra_resources = dedup_last(r.extra_resources);
    r.resources = dedup_last(r.resources);
    r.schemas = dedup_last(r.schemas);
    r
}

/// Sorts key/value pairs by key, keeping the last value of a repeated key
/// (a protobuf map keeps the last one it decodes).
fn dedup_last<V>(pairs: Vec<(String, V)>) -> Vec<(String, V)> {
    let map: std::collections::BTreeMap<String, V> = pairs.into_iter().collect();
    map.into_iter().collect()
}
