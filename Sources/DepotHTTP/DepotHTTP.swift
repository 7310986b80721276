/// DepotHTTP: typed endpoint contracts and an API client (issue #13, in progress).
public enum DepotHTTP {}
