-- Argo CD health check for the nsxv.io/v1alpha1 kinds NSXManager, EdgeTenant and
-- IPPoolAllocations (one script for all three: they share the status conventions).
-- Argo CD sets `obj` to the live object; the script returns { status, message }.
--
-- First match wins:
--   Suspended    annotation nsxv.io/paused: "true", or a condition with reason ReconcilePaused
--   Progressing  no status yet (observedGeneration -1, the CRDs' default), or behind metadata.generation
--   Degraded     Stalled=True (needs a person: a conflict, an invalid spec)
--   Degraded     Synced=False (the last reconcile failed: manager unreachable, bad credentials)
--   Progressing  Reconciling=True (the operator is making changes)
--   Healthy      Ready=True
--   Degraded     Ready=False, including reason Drifted under managementPolicy Observe: the
--                manager differs from git and nobody will correct it
--   Progressing  anything else (Ready Unknown or not reported yet)
-- gitops/README.md explains the choices; test/deploy/argocd-health.test.ts checks them.

local hs = {}

local function conditionsByType(status)
  local byType = {}
  if status == nil or status.conditions == nil then
    return byType
  end
  for _, condition in ipairs(status.conditions) do
    if condition.type ~= nil then
      byType[condition.type] = condition
    end
  end
  return byType
end

local function describe(condition)
  local reason = condition.reason or ""
  local message = condition.message or ""
  if reason ~= "" and message ~= "" then
    return reason .. ": " .. message
  end
  if reason ~= "" then
    return reason
  end
  return message
end

local function pausedMessage(obj, status)
  local annotations = obj.metadata and obj.metadata.annotations
  if annotations ~= nil and annotations["nsxv.io/paused"] == "true" then
    return "Paused by the annotation nsxv.io/paused: the operator makes no calls for this object"
  end
  if status ~= nil and status.conditions ~= nil then
    for _, condition in ipairs(status.conditions) do
      if condition.reason == "ReconcilePaused" then
        return describe(condition)
      end
    end
  end
  return nil
end

local status = obj.status
local conditions = conditionsByType(status)

local paused = pausedMessage(obj, status)
if paused ~= nil then
  hs.status = "Suspended"
  hs.message = paused
  return hs
end

local generation = obj.metadata and obj.metadata.generation
-- -1 is the CRDs' default: the operator has not written status yet
if status == nil or status.observedGeneration == nil or status.observedGeneration < 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to report status"
  return hs
end
if generation ~= nil and status.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. tostring(generation)
  return hs
end

local stalled = conditions["Stalled"]
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = describe(stalled)
  return hs
end

local synced = conditions["Synced"]
if synced ~= nil and synced.status == "False" then
  hs.status = "Degraded"
  hs.message = describe(synced)
  return hs
end

local reconciling = conditions["Reconciling"]
if reconciling ~= nil and reconciling.status == "True" then
  hs.status = "Progressing"
  hs.message = describe(reconciling)
  return hs
end

local ready = conditions["Ready"]
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = describe(ready)
  return hs
end
if ready ~= nil and ready.status == "False" then
  hs.status = "Degraded"
  hs.message = describe(ready)
  return hs
end

hs.status = "Progressing"
hs.message = "Waiting for the Ready condition"
return hs
