%% A chat user (seed 003, Chut): a process under the users' supervisor
%% (msgbench_chat_sup) that keeps the history of its last `history`
%% messages. It passes its client's messages to its group, and the group's
%% deliveries, once kept, to its client.
%%
%% A special process (proc_lib start, sys messages) rather than a
%% gen_server: it is started, supervised, inspected (sys:get_state/1) and
%% stopped like any OTP process, and its hot loop is a plain selective
%% receive with no callback dispatch or '$gen_cast' wrapping on the two
%% hops of every message it handles.
-module(msgbench_chat_user).

-export([start_link/3]).
%% proc_lib and sys.
-export([init/4, system_continue/3, system_terminate/4, system_code_change/4,
         system_get_state/1]).

-record(user, {group :: pid(),
               client :: pid(),
               limit :: non_neg_integer(),          % messages kept
               history :: queue:queue(tuple()),     % the last `limit`, oldest first
               held = 0 :: non_neg_integer(),       % queue:len(history), kept to avoid O(n)
               stored = 0 :: non_neg_integer()}).   % deliveries kept since the start

-spec start_link(pid(), pid(), non_neg_integer()) -> {ok, pid()}.
start_link(Group, Client, Limit) ->
    proc_lib:start_link(?MODULE, init, [self(), Group, Client, Limit]).

-spec init(pid(), pid(), pid(), non_neg_integer()) -> no_return().
init(Parent, Group, Client, Limit) ->
    proc_lib:init_ack(Parent, {ok, self()}),
    loop(Parent, #user{group = Group, client = Client, limit = Limit, history = queue:new()}).

loop(Parent, #user{group = Group, client = Client} = User) ->
    receive
        {post, _Peer, _Message} = Post ->
            %% From the client: to the group, as it is.
            Group ! Post,
            loop(Parent, User);
        {chat, _Group, _From, _SentAt, _Body} = Message ->
            %% From the group: keep it, then on to the client.
            Kept = keep(Message, User),
            Client ! Message,
            loop(Parent, Kept);
        {report, From, Ref} ->
            From ! {Ref, User#user.stored, User#user.held},
            loop(Parent, User);
        {system, From, Request} ->
            sys:handle_system_msg(Request, From, Parent, ?MODULE, [], User)
    end.

%% The history is a bounded queue: the oldest message goes when a new one
%% would pass the limit (amortised O(1) whatever the limit; a tuple ring
%% updated with setelement/3 would copy all `history` slots per message).
keep(_Message, #user{limit = 0, stored = Stored} = User) ->
    User#user{stored = Stored + 1};
keep(Message, #user{limit = Limit, held = Limit, history = History, stored = Stored} = User) ->
    {_Oldest, Rest} = queue:out(History),
    User#user{history = queue:in(Message, Rest), stored = Stored + 1};
keep(Message, #user{history = History, held = Held, stored = Stored} = User) ->
    User#user{history = queue:in(Message, History), held = Held + 1, stored = Stored + 1}.

-spec system_continue(pid(), [sys:dbg_opt()], #user{}) -> no_return().
system_continue(Parent, _Debug, User) ->
    loop(Parent, User).

-spec system_terminate(term(), pid(), [sys:dbg_opt()], #user{}) -> no_return().
system_terminate(Reason, _Parent, _Debug, _User) ->
    exit(Reason).

-spec system_code_change(#user{}, module(), term(), term()) -> {ok, #user{}}.
system_code_change(User, _Module, _OldVsn, _Extra) ->
    {ok, User}.

%% sys:get_state/1 gives a map, so that tests need not know the record.
-spec system_get_state(#user{}) -> {ok, map()}.
system_get_state(#user{history = History, held = Held, stored = Stored, limit = Limit}) ->
    {ok, #{history => queue:to_list(History), held => Held, stored => Stored, limit => Limit}}.
