output "policy" {
  description = "The policy of taskgate's own identity (the ECS task role, the pod's IRSA role) as an object: Version and Statement. Statement is empty when taskgate calls no Step Functions API itself and has no event source."
  value       = local.policies[""]

  precondition {
    condition     = length(local.bad_arns) == 0
    error_message = "These are not Step Functions state machine ARNs: ${join(", ", local.bad_arns)}. Want arn:PARTITION:states:REGION:ACCOUNT:stateMachine:NAME, optionally followed by :VERSION or :ALIAS."
  }
  precondition {
    condition     = length(local.both_types) == 0
    error_message = "These state machines are listed both as Standard and as sync Express: ${join(", ", local.both_types)}. A state machine has one type; list all its targets under the one it has."
  }
  precondition {
    condition     = length(local.bad_topics) == 0
    error_message = "These are not SNS topic ARNs: ${join(", ", local.bad_topics)}. Want arn:PARTITION:sns:REGION:ACCOUNT:NAME (the engine's events.topicArn)."
  }
  precondition {
    condition     = length(local.bad_prefixes) == 0
    error_message = "These cannot start an SQS queue name: ${join(", ", local.bad_prefixes)}. Want at most 64 letters, digits, - and _ (the engine's events.queuePrefix)."
  }
}

output "policy_json" {
  description = "The policy of taskgate's own identity as JSON, for aws_iam_role_policy. Attach it only when has_statements is true: IAM refuses a policy with no statement."
  value       = jsonencode(local.policies[""])

  precondition {
    condition     = length(local.bad_arns) == 0
    error_message = "These are not Step Functions state machine ARNs: ${join(", ", local.bad_arns)}. Want arn:PARTITION:states:REGION:ACCOUNT:stateMachine:NAME, optionally followed by :VERSION or :ALIAS."
  }
  precondition {
    condition     = length(local.both_types) == 0
    error_message = "These state machines are listed both as Standard and as sync Express: ${join(", ", local.both_types)}. A state machine has one type; list all its targets under the one it has."
  }
  precondition {
    condition     = length(local.bad_topics) == 0
    error_message = "These are not SNS topic ARNs: ${join(", ", local.bad_topics)}. Want arn:PARTITION:sns:REGION:ACCOUNT:NAME (the engine's events.topicArn)."
  }
  precondition {
    condition     = length(local.bad_prefixes) == 0
    error_message = "These cannot start an SQS queue name: ${join(", ", local.bad_prefixes)}. Want at most 64 letters, digits, - and _ (the engine's events.queuePrefix)."
  }
}

output "statement_count" {
  description = "How many statements the policy of taskgate's own identity has."
  value       = length(local.policies[""].Statement)
}

output "has_statements" {
  description = "Whether the policy of taskgate's own identity has any statement, known when planning even if ARNs are not (they come from resources created in the same apply): use it for the count of the aws_iam_role_policy that attaches policy_json."
  value = length(concat(var.state_machine_arns, var.sync_express_state_machine_arns, flatten([
    for a in var.cross_account : concat(a.state_machine_arns, a.sync_express_state_machine_arns)
  ]))) > 0 || length(var.events) > 0
}

output "assume_role_arns" {
  description = "The roles taskgate assumes (those of cross_account with at least one state machine), sorted."
  value       = local.assumed_roles
}

output "cross_account_policies" {
  description = "For each assumed role ARN, the policy that role needs in its own account, as an object. The role's trust policy must also let taskgate's identity assume it."
  value       = { for role in local.assumed_roles : role => local.policies[role] }
}

output "cross_account_policies_json" {
  description = "For each assumed role ARN, the policy that role needs in its own account, as JSON."
  value       = { for role in local.assumed_roles : role => jsonencode(local.policies[role]) }
}
