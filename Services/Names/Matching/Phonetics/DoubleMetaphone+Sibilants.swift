// The rules of J, L, S, T, W and Z, as in Philips' original; the comments name the examples they
// were written for.
extension MetaphoneEncoder {
    mutating func encodeJ() {
        // Spanish: Jose, San Jacinto.
        if has(current, "JOSE") || has(0, "SAN ") {
            if (current == 0 && isChar(current + 4, " ")) || has(0, "SAN ") { add("H") } else { add("J", "H") }
            current += 1
            return
        }
        if current == 0 && !has(current, "JOSE") {
            add("J", "A")  // Yankelovich, Jankelowicz
        } else if isVowel(current - 1) && !slavoGermanic && (isChar(current + 1, "A") || isChar(current + 1, "O")) {
            add("J", "H")  // Spanish: bajador
        } else if current == last {
            add("J", "")
        } else if !has(current + 1, "L", "T", "K", "S", "N", "M", "B", "Z") && !has(current - 1, "S", "K", "L") {
            add("J")
        }
        skip(doubled: "J")
    }

    mutating func encodeL() {
        if isChar(current + 1, "L") {
            // Spanish: Cabrillo, Gallegos.
            if (current == length - 3 && has(current - 1, "ILLO", "ILLA", "ALLE"))
                || ((has(last - 1, "AS", "OS") || has(last, "A", "O")) && has(current - 1, "ALLE"))
            {
                add("L", "")
                current += 2
                return
            }
            current += 2
        } else {
            current += 1
        }
        add("L")
    }

    mutating func encodeS() {
        if has(current - 1, "ISL", "YSL") {  // island, isle, Carlisle
            current += 1
            return
        }
        if current == 0 && has(current, "SUGAR") {
            add("X", "S")
            current += 1
            return
        }
        if has(current, "SH") {
            if has(current + 1, "HEIM", "HOEK", "HOLM", "HOLZ") { add("S") } else { add("X") }  // Germanic
            current += 2
            return
        }
        if has(current, "SIO", "SIA") || has(current, "SIAN") {  // Italian, Armenian
            if !slavoGermanic { add("S", "X") } else { add("S") }
            current += 3
            return
        }
        // Smith and Schmidt, Snider and Schneider; Slavic -sz-.
        if (current == 0 && has(current + 1, "M", "N", "L", "W")) || has(current + 1, "Z") {
            add("S", "X")
            current += has(current + 1, "Z") ? 2 : 1
            return
        }
        if has(current, "SC") {
            encodeSC()
            return
        }
        // French endings: Resnais, Artois.
        if current == last && has(current - 2, "AI", "OI") { add("", "S") } else { add("S") }
        current += has(current + 1, "S", "Z") ? 2 : 1
    }

    mutating func encodeSC() {
        if isChar(current + 2, "H") {
            // Dutch: school, schooner; Schermerhorn, Schenker.
            if has(current + 3, "OO", "ER", "EN", "UY", "ED", "EM") {
                if has(current + 3, "ER", "EN") { add("X", "SK") } else { add("SK") }
            } else if current == 0 && !isVowel(3) && !isChar(3, "W") {
                add("X", "S")
            } else {
                add("X")
            }
            current += 3
            return
        }
        if has(current + 2, "I", "E", "Y") { add("S") } else { add("SK") }
        current += 3
    }

    mutating func encodeT() {
        if has(current, "TION") || has(current, "TIA", "TCH") {
            add("X")
            current += 3
            return
        }
        if has(current, "TH") || has(current, "TTH") {
            // Thomas, Thames, or Germanic.
            if has(current + 2, "OM", "AM") || germanic { add("T") } else { add("0", "T") }
            current += 2
            return
        }
        current += has(current + 1, "T", "D") ? 2 : 1
        add("T")
    }

    mutating func encodeW() {
        if has(current, "WR") {
            add("R")
            current += 2
            return
        }
        if current == 0 && (isVowel(current + 1) || has(current, "WH")) {
            // Wasserman and Vasserman; Uomo and Womo.
            if isVowel(current + 1) { add("A", "F") } else { add("A") }
        }
        // Arnow and Arnoff.
        if (current == last && isVowel(current - 1)) || has(current - 1, "EWSKI", "EWSKY", "OWSKI", "OWSKY")
            || has(0, "SCH")
        {
            add("", "F")
            current += 1
            return
        }
        if has(current, "WICZ", "WITZ") {  // Filipowicz
            add("TS", "FX")
            current += 4
            return
        }
        current += 1
    }

    mutating func encodeZ() {
        if isChar(current + 1, "H") {  // Pinyin: Zhao
            add("J")
            current += 2
            return
        }
        if has(current + 1, "ZO", "ZI", "ZA") || (slavoGermanic && current > 0 && !isChar(current - 1, "T")) {
            add("S", "TS")
        } else {
            add("S")
        }
        skip(doubled: "Z")
    }
}
