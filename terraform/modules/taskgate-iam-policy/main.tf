# The least-privilege IAM policies for taskgate's Step Functions tools. This is the Terraform form of
# stepfunctions.IAMPolicies in adapters/stepfunctions/iam.go (what `taskgate iam-policy` prints):
# both build the same statements, in the same order, with the same Sids, and test/deploycheck runs
# the Go function's table cases through this module to keep it so. Read the Go doc comment for why
# each statement is there.
locals {
  # State machine, version and alias names: 1 to 80 characters, none of them white space, a control
  # character or one of <>{}[]?*"#%\^|~`$&,;:/ (the rule the Go function applies).
  name_pattern        = "[^\\s\\p{Z}\\p{Cc}<>{}\\[\\]?*\"#%\\\\^|~`$&,;:/]{1,80}"
  machine_arn_pattern = "^arn:[a-z0-9-]+:states:[a-z0-9-]+:[0-9]{12}:stateMachine:${local.name_pattern}(:${local.name_pattern})?$"
  bad_arns = [
    for arn in concat(var.state_machine_arns, var.sync_express_state_machine_arns, flatten([
      for a in var.cross_account : concat(a.state_machine_arns, a.sync_express_state_machine_arns)
    ])) : arn if !can(regex(local.machine_arn_pattern, arn))
  ]

  # Event sources: an SNS topic ARN, and a queue prefix of at most 64 letters, digits, - and _
  # (a random suffix of 16 follows it in an SQS name of at most 80).
  topic_arn_pattern = "^arn:aws[a-z-]*:sns:[a-z]{2}(-[a-z]+)+-[0-9]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}(\\.fifo)?$"
  all_events        = concat(var.events, flatten([for a in var.cross_account : a.events]))
  bad_topics        = [for e in local.all_events : e.topic_arn if !can(regex(local.topic_arn_pattern, e.topic_arn))]
  bad_prefixes      = [for e in local.all_events : e.queue_prefix if !can(regex("^[A-Za-z0-9_-]{1,64}$", e.queue_prefix))]

  # One entry per set of credentials: taskgate's own (role "") and each assumed role, merged by role.
  accesses = concat(
    [{
      role        = ""
      standard    = var.state_machine_arns
      express     = var.sync_express_state_machine_arns
      human_input = var.human_input
      events      = var.events
    }],
    [for a in var.cross_account : {
      role        = a.role_arn
      standard    = a.state_machine_arns
      express     = a.sync_express_state_machine_arns
      human_input = a.human_input
      events      = a.events
    }],
  )
  by_role = { for a in local.accesses : a.role => a... }
  merged = {
    for role, as in local.by_role : role => {
      standard    = distinct(flatten([for a in as : a.standard]))
      express     = distinct(flatten([for a in as : a.express]))
      human_input = anytrue([for a in as : a.human_input])
      events      = [for e in flatten([for a in as : a.events]) : e if !contains(local.bad_topics, e.topic_arn) && !contains(local.bad_prefixes, e.queue_prefix)]
    }
    # A role with no state machine is left out; taskgate's own credentials always have a policy.
    if role == "" || length(flatten([for a in as : concat(a.standard, a.express)])) > 0
  }

  # Every target, split into its state machine (the unqualified ARN) and qualifier ("" for none).
  targets = {
    for role, a in local.merged : role => [
      for t in concat(
        [for arn in a.standard : { arn = arn, express = false } if !contains(local.bad_arns, arn)],
        [for arn in a.express : { arn = arn, express = true } if !contains(local.bad_arns, arn)],
        ) : {
        machine   = join(":", slice(split(":", t.arn), 0, 7))
        qualifier = length(split(":", t.arn)) == 8 ? split(":", t.arn)[7] : ""
        version   = can(regex("^[0-9]+$", length(split(":", t.arn)) == 8 ? split(":", t.arn)[7] : "x"))
        express   = t.express
      }
    ]
  }

  # For each role, action and state machine: the qualifiers taskgate calls it with ("" for none).
  machine_actions = ["StartExecution", "StartSyncExecution", "DescribeStateMachine", "DescribeStateMachineAlias", "ListExecutions"]
  uses = {
    for role, ts in local.targets : role => flatten([
      for m in distinct([for t in ts : t.machine]) : [
        {
          action     = "StartExecution"
          machine    = m
          qualifiers = distinct([for t in ts : t.qualifier if t.machine == m && !t.express])
        },
        {
          action     = "StartSyncExecution"
          machine    = m
          qualifiers = distinct([for t in ts : t.qualifier if t.machine == m && t.express])
        },
        {
          # Unqualified always (taskgate reads the state machine's type), and each version target.
          action     = "DescribeStateMachine"
          machine    = m
          qualifiers = distinct(concat([""], [for t in ts : t.qualifier if t.machine == m && t.version]))
        },
        {
          action     = "DescribeStateMachineAlias"
          machine    = m
          qualifiers = distinct([for t in ts : t.qualifier if t.machine == m && t.qualifier != "" && !t.version])
        },
        {
          # tasks/list reads the caller's executions from the state machine's listing.
          action     = "ListExecutions"
          machine    = m
          qualifiers = anytrue([for t in ts : t.machine == m && !t.express]) ? [""] : []
        },
      ]
    ])
  }

  # Per role: for each action, one statement for the state machines used without qualifier (the
  # Null condition keeps it from allowing their versions and aliases too), then one per distinct
  # set of qualifiers, in the order of the sets joined with "," (no name contains one).
  machine_statements = {
    for role, us in local.uses : role => flatten([
      for action in local.machine_actions : concat(
        [
          for ms in [sort([for u in us : u.machine if u.action == action && contains(u.qualifiers, "")])] : {
            Sid       = action
            Effect    = "Allow"
            Action    = ["states:${action}"]
            Resource  = ms
            Condition = { Null = { "states:StateMachineQualifier" = ["true"] } }
          } if length(ms) > 0
        ],
        [
          for i, key in sort(distinct([
            for u in us : join(",", sort(compact(u.qualifiers))) if u.action == action && length(compact(u.qualifiers)) > 0
            ])) : {
            Sid      = "${action}Qualified${i + 1}"
            Effect   = "Allow"
            Action   = ["states:${action}"]
            Resource = sort([for u in us : u.machine if u.action == action && join(",", sort(compact(u.qualifiers))) == key])
            Condition = {
              "ForAnyValue:StringEquals" = { "states:StateMachineQualifier" = split(",", key) }
            }
          }
        ],
      )
    ])
  }

  # Executions of Standard state machines, whatever version or alias started them.
  execution_statements = {
    for role, ts in local.targets : role => [
      for rs in [sort(distinct([
        for t in ts : format("%s:execution:%s:*", join(":", slice(split(":", t.machine), 0, 5)), split(":", t.machine)[6]) if !t.express
        ]))] : {
        Sid      = "Executions"
        Effect   = "Allow"
        Action   = ["states:DescribeExecution", "states:GetExecutionHistory", "states:StopExecution"]
        Resource = rs
      } if length(rs) > 0
    ]
  }

  # Task tokens name no resource: AWS grants SendTask* only on "*".
  human_input_statements = {
    for role, a in local.merged : role => [
      for h in [a.human_input && length(local.targets[role]) > 0] : {
        Sid      = "HumanInput"
        Effect   = "Allow"
        Action   = ["states:SendTaskFailure", "states:SendTaskSuccess"]
        Resource = ["*"]
      } if h
    ]
  }

  # The event sources' queues (in the topic's partition and region, and the account of the role, or
  # of the topic for taskgate's own credentials), sqs:ListQueues (no resource-level permission),
  # and the subscription to the topics (SNS authorizes Unsubscribe against the topic).
  event_statements = {
    for role, a in local.merged : role => flatten([
      for es in [a.events] : [
        {
          Sid    = "EventQueues"
          Effect = "Allow"
          Action = [
            "sqs:CreateQueue", "sqs:DeleteMessage", "sqs:DeleteQueue", "sqs:GetQueueAttributes",
            "sqs:ListQueueTags", "sqs:ReceiveMessage", "sqs:SetQueueAttributes", "sqs:TagQueue",
          ]
          Resource = sort(distinct([
            for e in es : format("arn:%s:sqs:%s:%s:%s*", split(":", e.topic_arn)[1], split(":", e.topic_arn)[3],
            role == "" ? split(":", e.topic_arn)[4] : split(":", role)[4], e.queue_prefix)
          ]))
        },
        {
          Sid      = "ListEventQueues"
          Effect   = "Allow"
          Action   = ["sqs:ListQueues"]
          Resource = ["*"]
        },
        {
          Sid      = "EventSubscriptions"
          Effect   = "Allow"
          Action   = ["sns:Subscribe", "sns:Unsubscribe"]
          Resource = sort(distinct([for e in es : e.topic_arn]))
        },
      ] if length(es) > 0
    ])
  }

  assumed_roles = sort([for role in keys(local.merged) : role if role != ""])
  assume_role_statements = [
    for rs in [local.assumed_roles] : {
      Sid      = "AssumeRoles"
      Effect   = "Allow"
      Action   = ["sts:AssumeRole"]
      Resource = rs
    } if length(rs) > 0
  ]

  policies = {
    for role in keys(local.merged) : role => {
      Version = "2012-10-17"
      Statement = concat(
        local.machine_statements[role],
        local.execution_statements[role],
        local.human_input_statements[role],
        local.event_statements[role],
        role == "" ? local.assume_role_statements : [],
      )
    }
  }

  # A state machine has one type: the same one cannot be both Standard and Express.
  both_types = flatten([
    for role, ts in local.targets : [
      for m in distinct([for t in ts : t.machine]) : m
      if anytrue([for t in ts : t.machine == m && t.express]) && anytrue([for t in ts : t.machine == m && !t.express])
    ]
  ])
}
