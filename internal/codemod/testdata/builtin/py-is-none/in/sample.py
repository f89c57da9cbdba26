def describe(value, query, model):
    if value == None:
        return "missing"
    elif query == None:
        return "no query"
    while value == None:
        value = 1
    # Left alone: == may be overloaded on purpose (query builders, arrays).
    rows = query.filter(model.deleted_at == None)
    if model.owner == None:
        return "orphan"
    same = value == None
    return rows, same
