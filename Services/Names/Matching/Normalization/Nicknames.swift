import Foundation

/// English given-name diminutives and the formal names they stand for (`bob` → `robert`), folded.
/// A diminutive may stand for several names (`sandy` → `alexander`, `sandra`); a formal name stands
/// for itself. Matching treats two first names as one when their sets of formal names meet.
public enum Nicknames {
    /// The formal names `name` (folded) may stand for, itself included, the most likely first.
    public static func formalNames(_ name: String) -> [String] {
        guard let formals = table[name] else { return [name] }
        return formals.contains(name) ? formals : formals + [name]
    }

    /// Whether two folded first names can name the same person through a diminutive.
    public static func equivalent(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        let formalsOfB = formalNames(b)
        return formalNames(a).contains { formalsOfB.contains($0) }
    }

    /// The one formal name used where a single canonical form is needed (blocking keys).
    public static func canonical(_ name: String) -> String { table[name]?.first ?? name }

    /// Number of diminutives known.
    public static var count: Int { table.count }

    // One formal name a line, then its diminutives. Spelling variants of a formal name (Catherine,
    // Katherine, Kathryn) are listed as diminutives of one of them so that they meet too.
    private static let source = """
        abigail: abby abbie gail
        abraham: abe bram
        adelaide: addie della heidi
        agnes: aggie nessa
        albert: al bert bertie
        alexander: alex alec alek sandy sasha xander lex
        alexandra: alex alexa sandra sandy sasha lexi
        alfred: al alf alfie fred freddie
        alice: allie ally
        alison: ally allie
        allen: al
        amanda: mandy manda
        andrew: andy drew
        angela: angie
        anne: ann annie nan nancy nannie anna
        anthony: tony ant
        antoinette: toni netta
        archibald: archie
        arnold: arnie
        arthur: art artie
        augustus: gus augie
        barbara: barb barbie babs bobbie
        benjamin: ben benny benji
        bernard: bernie barney
        beverly: bev
        bradley: brad
        bridget: biddy bridie
        caroline: carol carrie caro lina
        catherine: cathy cath cat kate katie kathy kat kay katherine kathryn katharine kitty
        cecilia: cece cissy celia
        charles: charlie chuck chas chaz chip
        charlotte: lottie charlie lotte
        christina: chris chrissy tina christine kristina kristine
        christopher: chris kit topher
        clarence: clare
        clifford: cliff
        constance: connie
        cynthia: cindy
        daniel: dan danny
        david: dave davie davy
        deborah: deb debbie debra
        dennis: denny
        dolores: lola dee
        donald: don donnie
        dorothy: dot dottie dolly dora
        douglas: doug
        edward: ed eddie ned ted teddy
        edwin: ed eddie
        eleanor: ellie nell nellie nora elle
        elizabeth: liz lizzie liza eliza beth betsy betty bette bess bessie libby lisa elisa elise elsie
        emily: em emmy millie
        eugene: gene
        evelyn: evie eve
        florence: flo florrie
        frances: fran fanny frankie
        francis: frank frankie
        frederick: fred freddie freddy fritz
        gabriel: gabe
        gabrielle: gabby gaby
        geoffrey: geoff jeff
        gerald: gerry jerry
        gertrude: gertie trudy
        gilbert: gil
        gregory: greg
        harold: harry hal
        helen: nell nellie lena
        henry: hank harry hal
        herbert: herb bert
        howard: howie
        isaac: ike
        isabel: izzy bella belle isabella isabelle
        jacob: jake jack
        jacqueline: jackie jacky
        james: jim jimmy jimmie jamie jem
        jane: janie jenny
        janet: jan
        jeffrey: jeff
        jennifer: jen jenny jenn
        jessica: jess jessie
        john: jack johnny jon jonny
        jonathan: jon jonny
        joseph: joe joey jos
        josephine: jo josie
        joshua: josh
        judith: judy jude
        katherine: kathryn katharine
        kenneth: ken kenny
        lawrence: larry laurie
        leonard: len lenny leo
        leslie: les
        louis: lou lew
        louise: lou lulu
        lucinda: cindy lucy
        madeline: maddie maddy
        margaret: peggy peg maggie meg megan margie marge madge daisy greta gretchen rita maisie
        martha: marty mattie patty
        martin: marty
        mary: molly polly mae mamie maria marie
        matilda: tilly tilda mattie
        matthew: matt matty
        melissa: mel missy lissa
        michael: mike mikey mick mickey
        nathan: nate nat
        nathaniel: nate nat nathan
        nicholas: nick nicky nico
        nicole: nikki nicky
        oliver: ollie
        pamela: pam
        patricia: pat patty trish tricia
        patrick: pat paddy
        peter: pete
        philip: phil pip
        phillip: phil
        priscilla: cilla prissy
        rebecca: becky becca
        raymond: ray
        reginald: reg reggie
        richard: dick rich rick ricky richie rico
        robert: bob bobby rob robbie robby bert bertie
        roger: rodge
        ronald: ron ronnie
        rosemary: rose rosie
        russell: russ
        samantha: sam sammy
        samuel: sam sammy
        sandra: sandy sandi
        sarah: sally sadie sara
        solomon: sol
        stephanie: steph stevie
        stephen: steve stevie steven
        stanley: stan
        susan: sue susie suzy susanne suzanne
        sylvester: sly
        teresa: terry tess tessa theresa
        theodore: ted teddy theo
        thomas: tom tommy thom
        timothy: tim timmy
        valerie: val
        veronica: ronnie vera
        victoria: vicky vicki tori
        vincent: vince vinny
        virginia: ginny ginger
        walter: walt wally
        william: bill billy will willie willy liam
        winifred: winnie
        zachary: zach zack
        """

    /// The diminutives of a formal name (folded), for generating data.
    static func diminutives(of formal: String) -> [String] { diminutivesByFormal[formal] ?? [] }

    private static let diminutivesByFormal: [String: [String]] = {
        var result: [String: [String]] = [:]
        for line in source.split(separator: "\n") {
            let parts = line.split(separator: ":")
            result[parts[0].trimmingCharacters(in: .whitespaces)] = parts[1].split(separator: " ").map(String.init)
        }
        return result
    }()

    private static let table: [String: [String]] = {
        var table: [String: [String]] = [:]
        for line in source.split(separator: "\n") {
            let parts = line.split(separator: ":")
            let formal = parts[0].trimmingCharacters(in: .whitespaces)
            for nick in parts[1].split(separator: " ") {
                table[String(nick), default: []].append(formal)
            }
            if table[formal] == nil {
                table[formal] = [formal]
            } else if !table[formal]!.contains(formal) {
                table[formal]!.insert(formal, at: 0)
            }
        }
        return table
    }()
}
